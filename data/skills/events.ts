import { randomBytes } from 'node:crypto';
import * as keys from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * event-ticketing: an event holds its tiers as a map `tiers.<tier> = {priceCents, quantity,
 * remaining}`. A purchase takes `remaining` down under the condition `remaining >= quantity` and
 * writes its order in the same transaction, so concurrent buyers can never oversell.
 *
 * A USD sale also adds its cents to the month's revenue record (`REVENUE#<yyyy-mm>`, the one
 * figure the metrics summary reads, which royalty-tracker moves too) in that transaction, so the
 * revenue never counts a sale that did not happen. Sales in other currencies count as bookings
 * only: the summary is in USD and the platform converts no currencies.
 */

export interface TicketTier {
  priceCents: number;
  quantity: number;
  remaining: number;
}

export interface TicketedEvent {
  eventId: string;
  name: string;
  date: string;
  venue?: string;
  currency: string;
  tiers: Record<string, TicketTier>;
  createdAt: string;
}

export interface TicketOrder {
  orderId: string;
  eventId: string;
  tier: string;
  quantity: number;
  email: string;
  amountCents: number;
  currency: string;
  status: 'confirmed';
  createdAt: string;
}

export class SoldOutError extends DomainError {
  constructor(readonly remaining: number) {
    super('conflict', 'not enough tickets left in this tier', 'SOLD_OUT', { remaining });
  }
}

const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const PURCHASE_ATTEMPTS = 40;

export async function createTicketedEvent(
  userId: string,
  input: Omit<TicketedEvent, 'eventId' | 'createdAt' | 'tiers'> & { tiers: { tier: string; priceCents: number; quantity: number }[] },
  now = new Date(),
) {
  const event: TicketedEvent = {
    eventId: newId('evt'),
    name: input.name,
    date: input.date,
    venue: input.venue,
    currency: input.currency,
    tiers: Object.fromEntries(input.tiers.map((t) => [t.tier, { priceCents: t.priceCents, quantity: t.quantity, remaining: t.quantity }])),
    createdAt: now.toISOString(),
  };
  await tenant(userId).put({ ...keys.ticketedEvent(userId, event.eventId), ...event }, { expression: 'attribute_not_exists(pk)' });
  return event;
}

const eventView = ({ eventId, name, date, venue, currency, tiers, createdAt }: TicketedEvent): TicketedEvent => ({
  eventId,
  name,
  date,
  venue,
  currency,
  tiers,
  createdAt,
});

export async function getTicketedEvent(userId: string, eventId: string, consistent = false) {
  const item = await tenant(userId).get<TicketedEvent & Record<string, unknown>>(keys.ticketedEvent(userId, eventId), consistent);
  return item && eventView(item);
}

export async function listTicketedEvents(userId: string) {
  return (await tenant(userId).queryAll<TicketedEvent & Record<string, unknown>>(keys.ticketedEventPrefix)).map(eventView);
}

/** Sells `quantity` tickets of a tier or throws SoldOutError; the caller has checked the event and tier exist. */
export async function purchaseTickets(
  userId: string,
  event: TicketedEvent,
  tier: string,
  quantity: number,
  email: string,
  now = new Date(),
): Promise<TicketOrder> {
  const price = event.tiers[tier]!.priceCents;
  const order: TicketOrder = {
    orderId: newId('ord'),
    eventId: event.eventId,
    tier,
    quantity,
    email,
    amountCents: price * quantity,
    currency: event.currency,
    status: 'confirmed',
    createdAt: now.toISOString(),
  };
  const names = { '#tiers': 'tiers', '#tier': tier, '#remaining': 'remaining' };
  try {
    await transactRetrying(
      [
        tx.update(
          keys.ticketedEvent(userId, event.eventId),
          { expression: 'SET #tiers.#tier.#remaining = #tiers.#tier.#remaining - :q', names, values: { ':q': quantity } },
          { expression: '#tiers.#tier.#remaining >= :q', names, values: { ':q': quantity } },
        ),
        tx.put({ ...keys.ticketOrder(userId, order.orderId), ...order }, { expression: 'attribute_not_exists(pk)' }),
        ...(order.currency === 'USD' && order.amountCents > 0
          ? [
              tx.update(keys.revenueMonth(userId, order.createdAt.slice(0, 7)), {
                expression: 'ADD amountCents :cents, ticketCents :cents',
                values: { ':cents': order.amountCents },
              }),
            ]
          : []),
      ],
      PURCHASE_ATTEMPTS,
    );
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') {
      const now = await getTicketedEvent(userId, event.eventId, true);
      throw new SoldOutError(now?.tiers[tier]?.remaining ?? 0);
    }
    throw err;
  }
  return order;
}

export async function listTicketOrders(userId: string, eventId?: string): Promise<TicketOrder[]> {
  const items = await tenant(userId).queryAll<TicketOrder & Record<string, unknown>>(keys.ticketOrderPrefix);
  return items
    .filter((o) => !eventId || o.eventId === eventId)
    .map(({ orderId, eventId: e, tier, quantity, email, amountCents, currency, status, createdAt }) => ({
      orderId,
      eventId: e,
      tier,
      quantity,
      email,
      amountCents,
      currency,
      status,
      createdAt,
    }))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
