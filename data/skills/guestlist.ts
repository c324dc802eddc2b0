import { randomBytes } from 'node:crypto';
import * as keys from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * guestlist: `GUESTLIST#<eventId>` holds the capacity and `spotsLeft`; each guest takes 1 + plusOnes
 * spots, taken (and given back on removal) in the guest's own transaction, so a list never
 * overfills however many door staff add guests at once.
 */

export interface GuestList {
  eventId: string;
  name?: string;
  capacity: number;
  spotsLeft: number;
  createdAt: string;
}

export interface Guest {
  guestId: string;
  eventId: string;
  name: string;
  email?: string;
  plusOnes: number;
  addedAt: string;
  checkedInAt?: string;
}

export class ListFullError extends DomainError {
  constructor(readonly spotsLeft: number) {
    super('conflict', 'the guest list is full', 'LIST_FULL', { spotsLeft });
  }
}
export class ListExistsError extends DomainError {
  constructor(message: string) {
    super('conflict', message, 'LIST_EXISTS');
  }
}
export class AlreadyCheckedInError extends DomainError {
  constructor(message: string) {
    super('conflict', message, 'ALREADY_CHECKED_IN');
  }
}

const ATTEMPTS = 25;
const SPOTS = { '#spots': 'spotsLeft' };

export async function createGuestList(userId: string, input: { eventId: string; name?: string; capacity: number }, now = new Date()): Promise<GuestList> {
  const list: GuestList = { ...input, spotsLeft: input.capacity, createdAt: now.toISOString() };
  try {
    await tenant(userId).put({ ...keys.guestList(userId, input.eventId), ...list }, { expression: 'attribute_not_exists(pk)' });
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new ListExistsError('this event already has a guest list');
    throw err;
  }
  return list;
}

export async function getGuestList(userId: string, eventId: string, consistent = false): Promise<GuestList | undefined> {
  const item = await tenant(userId).get<GuestList & Record<string, unknown>>(keys.guestList(userId, eventId), consistent);
  return item && { eventId: item.eventId, name: item.name, capacity: item.capacity, spotsLeft: item.spotsLeft, createdAt: item.createdAt };
}

/** Adds a guest; undefined when the event has no list. */
export async function addGuest(userId: string, input: Omit<Guest, 'guestId' | 'addedAt'>, now = new Date()): Promise<Guest | undefined> {
  const guest: Guest = { ...input, guestId: `gst_${randomBytes(8).toString('hex')}`, addedAt: now.toISOString() };
  const spots = 1 + input.plusOnes;
  try {
    await transactRetrying(
      [
        tx.update(
          keys.guestList(userId, input.eventId),
          { expression: 'SET #spots = #spots - :n', names: SPOTS, values: { ':n': spots } },
          { expression: 'attribute_exists(pk) AND #spots >= :n', names: SPOTS, values: { ':n': spots } },
        ),
        tx.put({ ...keys.guest(userId, input.eventId, guest.guestId), ...guest }, { expression: 'attribute_not_exists(pk)' }),
      ],
      ATTEMPTS,
    );
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') {
      const list = await getGuestList(userId, input.eventId, true);
      if (!list) return undefined;
      throw new ListFullError(list.spotsLeft);
    }
    throw err;
  }
  return guest;
}

const guestView = ({ guestId, eventId, name, email, plusOnes, addedAt, checkedInAt }: Guest): Guest => ({
  guestId,
  eventId,
  name,
  email,
  plusOnes,
  addedAt,
  checkedInAt,
});

export async function listGuests(userId: string, eventId: string): Promise<Guest[]> {
  const items = await tenant(userId).queryAll<Guest & Record<string, unknown>>(keys.guestPrefix(eventId), { consistent: true });
  return items.map(guestView).sort((a, b) => a.addedAt.localeCompare(b.addedAt));
}

/** Removes a guest and gives their spots back; false when there is no such guest. */
export async function removeGuest(userId: string, eventId: string, guestId: string): Promise<boolean> {
  const guest = await tenant(userId).get<Guest & Record<string, unknown>>(keys.guest(userId, eventId, guestId), true);
  if (!guest) return false;
  try {
    await transactRetrying(
      [
        tx.delete(keys.guest(userId, eventId, guestId), { expression: 'attribute_exists(pk)' }),
        tx.update(keys.guestList(userId, eventId), { expression: 'SET #spots = #spots + :n', names: SPOTS, values: { ':n': 1 + guest.plusOnes } }),
      ],
      ATTEMPTS,
    );
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
  return true;
}

/** Marks a guest arrived; undefined when there is no such guest, AlreadyCheckedInError the second time. */
export async function checkInGuest(userId: string, eventId: string, guestId: string, now = new Date()): Promise<Guest | undefined> {
  try {
    const item = await tenant(userId).update<Guest & Record<string, unknown>>(
      keys.guest(userId, eventId, guestId),
      { expression: 'SET checkedInAt = :at', values: { ':at': now.toISOString() } },
      { expression: 'attribute_exists(pk) AND attribute_not_exists(checkedInAt)' },
    );
    return guestView(item);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const existing = await tenant(userId).get(keys.guest(userId, eventId, guestId), true);
    if (!existing) return undefined;
    throw new AlreadyCheckedInError('the guest has already checked in');
  }
}
