import * as keys from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { outboundCountUpdate } from '../metrics';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * booking-settlement's escrow ledger at `USER#<id> / BOOKING#<bookingId>` (the records the metrics
 * summary counts: `pending` while the deposit is held, `completed` once released). Amounts are
 * exact decimal strings. A release is one conditional write (`status = pending`), in the same
 * transaction as the month's revenue, so however many releases race only one ever lands.
 */
export interface EscrowTerms {
  guarantee: string;
  backend: string;
  deposit: string;
}

export interface BookingEscrow extends Record<string, unknown> {
  bookingId: string;
  status: 'pending' | 'completed';
  escrow: EscrowTerms;
  createdAt: string;
  releasedAt?: string;
  settlement?: Record<string, string>;
}

export class EscrowExistsError extends DomainError {
  constructor() {
    super('conflict', 'this booking already has an escrow', 'ESCROW_EXISTS');
  }
}
export class EscrowAlreadyReleasedError extends DomainError {
  constructor() {
    super('conflict', 'the funds of this booking were already released', 'ALREADY_RELEASED');
  }
}

export async function createEscrow(userId: string, escrow: BookingEscrow): Promise<void> {
  try {
    await tenant(userId).put({ ...keys.booking(userId, escrow.bookingId), ...escrow }, { expression: 'attribute_not_exists(pk)' });
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new EscrowExistsError();
    throw err;
  }
}

export const getEscrow = (userId: string, bookingId: string) => tenant(userId).get<BookingEscrow>(keys.booking(userId, bookingId), true);

export const listEscrows = (userId: string) => tenant(userId).queryAll<BookingEscrow>(keys.bookingPrefix, { consistent: true });

/** Marks the escrow released with its settlement and adds the payout to the month's revenue; once only. */
export async function releaseEscrow(
  userId: string,
  bookingId: string,
  release: { releasedAt: string; settlement: Record<string, string>; revenueMonth: string; revenueCents: number },
): Promise<void> {
  try {
    await transactRetrying([
      tx.update(
        keys.booking(userId, bookingId),
        {
          expression: 'SET #status = :completed, releasedAt = :at, settlement = :settlement',
          names: { '#status': 'status' },
          values: { ':completed': 'completed', ':at': release.releasedAt, ':settlement': release.settlement },
        },
        { expression: '#status = :pending', values: { ':pending': 'pending' } },
      ),
      tx.update(keys.revenueMonth(userId, release.revenueMonth), { expression: 'ADD amountCents :cents', values: { ':cents': release.revenueCents } }),
      outboundCountUpdate(userId, release.releasedAt, { escrowReleases: 1, movedMicros: release.revenueCents * 10_000 }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new EscrowAlreadyReleasedError();
    throw err;
  }
}
