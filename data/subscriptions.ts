import * as keys from './keys';
import { getGlobal, tenant, tx, type TransactItem } from './tenant';

/**
 * The card subscription of an account and what the card webhook writes with it:
 * - `USER#<id> / SUBSCRIPTION`: the subscription state, plus extra storage bought on top of the plan;
 *   the plan is mirrored onto the profile (`USER#<id> / PROFILE`), so the settings page shows it;
 * - `EVENT#<eventId> / CARD`: one record per processor event, written only if absent in the
 *   transaction of the event's effect, so each event takes effect once;
 * - `CARDCUSTOMER#<customerId>`: the account of a processor customer, for events that carry no user id.
 * The webhook (domain/billing/subscriptions.ts) composes these items into one transaction per event.
 */
export interface SubscriptionRecord {
  status: string;
  plan: string | null;
  subscriptionId?: string;
  /** Start of the billing period, for usage "this period". */
  currentPeriodStart?: string | null;
  customerId?: string;
  currentPeriodEnd?: string | null;
  cancelAtPeriodEnd?: boolean;
  eventCreated: number;
  /** Tie-break between events of the same second: terminal 3, active 2, other 1 (domain/billing/subscriptions.ts). */
  statusRank?: number;
  lastEventId?: string;
  /** Extra agent storage bought on top of the plan (POST /api/card/storage-upgrade). */
  extraStorageGb?: number;
  updatedAt: string;
}

/** Event records outlive the processor's retry window (3 days) by far; then they expire. */
const EVENT_RECORD_DAYS = 90;

export async function getSubscription(userId: string): Promise<SubscriptionRecord | undefined> {
  return tenant(userId).get<SubscriptionRecord & Record<string, unknown>>(keys.subscription(userId));
}

/** The account a processor customer belongs to (consistent read). */
export async function findUserIdByCardCustomer(customerId: string): Promise<string | undefined> {
  return (await getGlobal<{ userId: string }>(keys.cardCustomer(customerId), true))?.userId;
}

/** The record of a handled event, on the condition that the event was not handled before. */
export function cardEventItem(event: { id: string; type: string; created: number }, userId: string | undefined, outcome: string, now: Date): TransactItem {
  return tx.put(
    {
      ...keys.cardEvent(event.id),
      eventId: event.id,
      type: event.type,
      created: event.created,
      userId,
      outcome,
      processedAt: now.toISOString(),
      expiresAt: Math.floor(now.getTime() / 1000) + EVENT_RECORD_DAYS * 86400,
    },
    { expression: 'attribute_not_exists(pk)' },
  );
}

/** Links a processor customer to its account (nothing without a customer). */
export function cardCustomerItems(customerId: string | undefined, userId: string): TransactItem[] {
  return customerId ? [tx.put({ ...keys.cardCustomer(customerId), userId })] : [];
}

/** Refuses the transaction when the account does not exist. */
export const accountExistsItem = (userId: string): TransactItem => tx.conditionCheck(keys.profile(userId), { expression: 'attribute_exists(pk)' });

/** The plan mirrored onto the profile, on the condition that the account exists. */
export function profilePlanItem(userId: string, plan: string, now: Date): TransactItem {
  return tx.update(
    keys.profile(userId),
    { expression: 'SET #plan = :plan, updatedAt = :now', names: { '#plan': 'plan' }, values: { ':plan': plan, ':now': now.toISOString() } },
    { expression: 'attribute_exists(pk)' },
  );
}

/** Bought storage added to the subscription item. */
export function storageGrantItem(userId: string, storageGb: number, now: Date): TransactItem {
  return tx.update(keys.subscription(userId), {
    expression: 'ADD extraStorageGb :gb SET updatedAt = :now',
    values: { ':gb': storageGb, ':now': now.toISOString() },
  });
}

/** A subscription state set by one processor event; fields left undefined keep their stored value. */
export interface SubscriptionState {
  userId: string;
  subscriptionId: string;
  status: string;
  /** Orders the states of events of the same second; the higher (or equal) rank wins. */
  statusRank: number;
  eventId: string;
  /** The processor's event time: an older event never overwrites a newer state. */
  eventCreated: number;
  plan?: string;
  customerId?: string;
  currentPeriodStart?: string;
  currentPeriodEnd?: string;
  cancelAtPeriodEnd?: boolean;
  /** Refuse the write when the stored subscription is another one that is active or trialing. */
  keepOtherActive: boolean;
}

/**
 * The subscription item set to `state`, on the condition that the stored state comes from an older
 * event (or one of the same second with no higher rank) and, with `keepOtherActive`, that it is not
 * another active subscription.
 */
export function subscriptionStateItem(state: SubscriptionState, now: Date): TransactItem {
  const sets = ['#status = :status', 'statusRank = :rank', 'subscriptionId = :sid', 'eventCreated = :created', 'lastEventId = :eid', 'updatedAt = :now'];
  const values: Record<string, unknown> = {
    ':status': state.status,
    ':rank': state.statusRank,
    ':sid': state.subscriptionId,
    ':created': state.eventCreated,
    ':eid': state.eventId,
    ':now': now.toISOString(),
  };
  const optional: [string, string, unknown][] = [
    ['#plan', ':plan', state.plan],
    ['customerId', ':cus', state.customerId],
    ['currentPeriodStart', ':cps', state.currentPeriodStart],
    ['currentPeriodEnd', ':cpe', state.currentPeriodEnd],
    ['cancelAtPeriodEnd', ':cape', state.cancelAtPeriodEnd],
  ];
  for (const [attr, placeholder, value] of optional) {
    if (value === undefined) continue;
    sets.push(`${attr} = ${placeholder}`);
    values[placeholder] = value;
  }
  let condition =
    '(attribute_not_exists(eventCreated) OR eventCreated < :created OR (eventCreated = :created AND (attribute_not_exists(statusRank) OR statusRank <= :rank)))';
  const conditionValues: Record<string, unknown> = {};
  if (state.keepOtherActive) {
    condition += ' AND (attribute_not_exists(subscriptionId) OR subscriptionId = :sid OR NOT (#status IN (:active, :trialing)))';
    Object.assign(conditionValues, { ':active': 'active', ':trialing': 'trialing' });
  }
  const names: Record<string, string> = { '#status': 'status', ...(state.plan ? { '#plan': 'plan' } : {}) };
  return tx.update(
    keys.subscription(state.userId),
    { expression: `SET ${sets.join(', ')}`, names, values },
    { expression: condition, values: conditionValues },
  );
}
