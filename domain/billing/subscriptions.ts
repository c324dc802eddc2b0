import * as z from 'zod/mini';
import type { CardEvent } from '#adapters/card';
import { cardConfig } from '#platform/config';
import { isGatewayPluginId } from '#contract/gateway';
import { GATEWAY_RECEIPT_HASH, gatewayReceiptItem } from '#data/gateway-receipts';
import * as keys from '#data/keys';
import { ConditionFailedError, getGlobal, transact, tx, type TransactItem } from '#data/tenant';
import { transactRetrying } from '#data/transact-retry';
import { logger } from '#platform/logger';
import { creditEntryId, creditItems } from './credits';
import { ACTIVE_STATUSES } from './entitlements';
import { isPlanName, type PlanName } from './plans';
import { lazySchema } from '#contract/lazy-schema';

/**
 * Applies verified card webhook events to the account: the SUBSCRIPTION item (plus the plan mirrored
 * onto the profile, so the settings page shows it), bought credits and bought storage. Three rules
 * hold whatever the delivery order:
 * - each event id takes effect once: its `EVENT#<id>` record is written in the same transaction as
 *   the effect, conditional on not existing, so a redelivery changes nothing;
 * - the newest state wins: the item keeps the `created` time of the event that set it, and an older
 *   event's write is refused by a condition (equal times: a terminal status beats active beats the
 *   rest, so one second's events settle the same way in any order);
 * - a cancelled old subscription never switches off a newer active one.
 * The plan name stays on the profile when a subscription ends; whether it is usable is the status
 * (`accountAccess` answers from it).
 */

export type EventOutcome = 'applied' | 'duplicate' | 'stale' | 'ignored';

/** Event records outlive the processor's retry window (3 days) by far; then they expire. */
const EVENT_RECORD_DAYS = 90;
const TERMINAL_STATUSES = new Set(['canceled', 'incomplete_expired']);
const USER_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_CREDITS_PER_PURCHASE = 10_000_000;
const MAX_STORAGE_GB_PER_PURCHASE = 1024;

const statusRank = (status: string) => (TERMINAL_STATUSES.has(status) ? 3 : ACTIVE_STATUSES.has(status) ? 2 : 1);

/** The processor sends either an id or the expanded object. */
const idOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : undefined;

const Metadata = lazySchema(() => z.catch(z.record(z.string(), z.string()), {}));
const epochToIso = (s: unknown) => (typeof s === 'number' && Number.isFinite(s) ? new Date(s * 1000).toISOString() : undefined);
const positiveIntOf = (s: string | undefined, max: number) => {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 && n <= max ? n : undefined;
};

const CheckoutSession = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    mode: z.optional(z.string()),
    created: z.optional(z.number()),
    client_reference_id: z.nullish(z.string()),
    payment_status: z.optional(z.string()),
    metadata: z.optional(Metadata()),
    subscription: z.optional(z.unknown()),
    customer: z.optional(z.unknown()),
    amount_total: z.nullish(z.int()),
    currency: z.nullish(z.string()),
  }),
);

const Subscription = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    status: z.string(),
    customer: z.optional(z.unknown()),
    metadata: z.optional(Metadata()),
    cancel_at_period_end: z.optional(z.boolean()),
    current_period_start: z.optional(z.number()),
    current_period_end: z.optional(z.number()),
    items: z.optional(
      z.looseObject({
        data: z.array(
          z.looseObject({
            current_period_start: z.optional(z.number()),
            current_period_end: z.optional(z.number()),
            price: z.optional(z.looseObject({ id: z.string() })),
          }),
        ),
      }),
    ),
  }),
);

interface SubscriptionChange {
  userId: string;
  subscriptionId: string;
  status: string;
  plan?: PlanName;
  customerId?: string;
  currentPeriodStart?: string;
  currentPeriodEnd?: string;
  cancelAtPeriodEnd?: boolean;
}

export async function applyCardEvent(event: CardEvent, now = new Date()): Promise<EventOutcome> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return onCheckoutPaid(event, now);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return onSubscriptionChange(event, now);
    default:
      return 'ignored';
  }
}

function eventRecord(event: CardEvent, userId: string | undefined, outcome: EventOutcome, now: Date): TransactItem {
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

/** Marks an event handled without any effect (stale, unknown user, nothing to do). */
async function recordOnly(event: CardEvent, userId: string | undefined, outcome: EventOutcome, now: Date): Promise<EventOutcome> {
  try {
    await transact([eventRecord(event, userId, outcome, now)]);
    return outcome;
  } catch (err) {
    if (err instanceof ConditionFailedError) return 'duplicate';
    throw err;
  }
}

const failed = (err: ConditionFailedError, index: number) => err.reasons[index] === 'ConditionalCheckFailed';

/**
 * Runs the event's effect together with its event record. `explain` names the outcome of a refused
 * condition at each index after the record (index 0), e.g. a stale subscription write.
 */
async function applyOnce(
  event: CardEvent,
  userId: string | undefined,
  effect: TransactItem[],
  explain: Record<number, EventOutcome>,
  now: Date,
): Promise<EventOutcome> {
  try {
    await transactRetrying([eventRecord(event, userId, 'applied', now), ...effect]);
    return 'applied';
  } catch (err) {
    // Contention that outlasted the retries is not an answer: the processor delivers the event again.
    if (!(err instanceof ConditionFailedError) || !err.reasons.includes('ConditionalCheckFailed')) throw err;
    if (failed(err, 0)) return 'duplicate';
    const outcome = Object.entries(explain).find(([index]) => failed(err, Number(index)))?.[1] ?? 'ignored';
    if (outcome === 'ignored') logger().warn('card event for an unknown account ignored', { eventId: event.id, type: event.type });
    return recordOnly(event, userId, outcome, now);
  }
}

const profileExists = (userId: string) => tx.conditionCheck(keys.profile(userId), { expression: 'attribute_exists(pk)' });

function customerLink(customerId: string | undefined, userId: string): TransactItem[] {
  return customerId ? [tx.put({ ...keys.cardCustomer(customerId), userId })] : [];
}

async function onCheckoutPaid(event: CardEvent, now: Date): Promise<EventOutcome> {
  const parsed = CheckoutSession().safeParse(event.data.object);
  if (!parsed.success) return recordOnly(event, undefined, 'ignored', now);
  const session = parsed.data;
  const metadata = session.metadata ?? {};
  if (metadata.kind === 'gateway-call') return onGatewayCallPaid(event, session, now);
  const userId = session.client_reference_id ?? metadata.userId;
  if (!userId || !USER_ID.test(userId) || (metadata.userId && metadata.userId !== userId)) {
    logger().warn('card checkout without a usable user id ignored', { eventId: event.id });
    return recordOnly(event, undefined, 'ignored', now);
  }
  const paid = session.payment_status === 'paid' || session.payment_status === 'no_payment_required';
  const customerId = idOf(session.customer);
  const kind = metadata.kind ?? (session.mode === 'subscription' ? 'subscription' : undefined);

  if (kind === 'credits') {
    const credits = positiveIntOf(metadata.credits, MAX_CREDITS_PER_PURCHASE);
    if (!paid || !credits) return recordOnly(event, userId, 'ignored', now);
    // The session id makes the grant idempotent across event types; its creation time keeps the ledger in order.
    const entryId = creditEntryId((session.created ?? event.created) * 1000, `purchase#${session.id}`);
    const grant = creditItems(userId, credits, 'purchase', entryId, `card checkout ${session.id}`, now);
    return applyOnce(event, userId, [...grant, ...customerLink(customerId, userId)], { 1: 'ignored', 2: 'duplicate' }, now);
  }

  if (kind === 'storage') {
    const storageGb = positiveIntOf(metadata.storageGb, MAX_STORAGE_GB_PER_PURCHASE);
    if (!paid || !storageGb) return recordOnly(event, userId, 'ignored', now);
    const grant = tx.update(keys.subscription(userId), {
      expression: 'ADD extraStorageGb :gb SET updatedAt = :now',
      values: { ':gb': storageGb, ':now': now.toISOString() },
    });
    return applyOnce(event, userId, [profileExists(userId), grant, ...customerLink(customerId, userId)], { 1: 'ignored' }, now);
  }

  const subscriptionId = idOf(session.subscription);
  const plan = isPlanName(metadata.plan) ? metadata.plan : undefined;
  if (kind !== 'subscription' || !subscriptionId || !paid) return recordOnly(event, userId, 'ignored', now);
  return applySubscription(event, { userId, subscriptionId, status: 'active', plan, customerId }, now, customerLink(customerId, userId));
}

/**
 * A one-off gateway call paid by a caller without an account: the prepaid single-use receipt under
 * the hash the checkout carried (data/gateway-receipts.ts). The receipt is keyed by that hash,
 * so a second event of the same session (completed, then async succeeded) stores nothing twice.
 */
async function onGatewayCallPaid(event: CardEvent, session: z.output<ReturnType<typeof CheckoutSession>>, now: Date): Promise<EventOutcome> {
  const metadata = session.metadata ?? {};
  const paid = session.payment_status === 'paid';
  const plugin = metadata.plugin;
  const receiptHash = metadata.receipt;
  if (!paid || !plugin || !isGatewayPluginId(plugin) || !receiptHash || !GATEWAY_RECEIPT_HASH.test(receiptHash)) {
    return recordOnly(event, undefined, 'ignored', now);
  }
  const receipt = gatewayReceiptItem(
    { receiptHash, plugin, sessionId: session.id, amountMinor: session.amount_total ?? undefined, currency: session.currency ?? undefined },
    now,
  );
  return applyOnce(event, undefined, [receipt], { 1: 'duplicate' }, now);
}

/** The plan of a recurring price, for subscriptions changed at the processor without our metadata. */
function planOfPrice(priceId: string | undefined): PlanName | undefined {
  if (!priceId) return undefined;
  const plan = Object.entries(cardConfig().planPrices).find(([, p]) => p === priceId)?.[0];
  return isPlanName(plan) ? plan : undefined;
}

async function onSubscriptionChange(event: CardEvent, now: Date): Promise<EventOutcome> {
  const parsed = Subscription().safeParse(event.data.object);
  if (!parsed.success) return recordOnly(event, undefined, 'ignored', now);
  const sub = parsed.data;
  const metadata = sub.metadata ?? {};
  const customerId = idOf(sub.customer);
  let userId: string | undefined = metadata.userId;
  if (!userId && customerId) userId = (await getGlobal<{ userId: string }>(keys.cardCustomer(customerId), true))?.userId;
  if (!userId || !USER_ID.test(userId)) {
    logger().warn('card subscription event without a known account ignored', { eventId: event.id });
    return recordOnly(event, undefined, 'ignored', now);
  }
  const item = sub.items?.data[0];
  const plan = isPlanName(metadata.plan) ? metadata.plan : planOfPrice(item?.price?.id);
  const change: SubscriptionChange = {
    userId,
    subscriptionId: sub.id,
    status: event.type === 'customer.subscription.deleted' && !TERMINAL_STATUSES.has(sub.status) ? 'canceled' : sub.status,
    plan,
    customerId,
    // Newer API versions keep the billing period on the subscription's items.
    currentPeriodStart: epochToIso(sub.current_period_start ?? item?.current_period_start),
    currentPeriodEnd: epochToIso(sub.current_period_end ?? item?.current_period_end),
    cancelAtPeriodEnd: sub.cancel_at_period_end,
  };
  return applySubscription(event, change, now);
}

async function applySubscription(event: CardEvent, change: SubscriptionChange, now: Date, extra: TransactItem[] = []): Promise<EventOutcome> {
  const { userId } = change;
  const sets = ['#status = :status', 'statusRank = :rank', 'subscriptionId = :sid', 'eventCreated = :created', 'lastEventId = :eid', 'updatedAt = :now'];
  const values: Record<string, unknown> = {
    ':status': change.status,
    ':rank': statusRank(change.status),
    ':sid': change.subscriptionId,
    ':created': event.created,
    ':eid': event.id,
    ':now': now.toISOString(),
  };
  const optional: [string, string, unknown][] = [
    ['#plan', ':plan', change.plan],
    ['customerId', ':cus', change.customerId],
    ['currentPeriodStart', ':cps', change.currentPeriodStart],
    ['currentPeriodEnd', ':cpe', change.currentPeriodEnd],
    ['cancelAtPeriodEnd', ':cape', change.cancelAtPeriodEnd],
  ];
  for (const [attr, placeholder, value] of optional) {
    if (value === undefined) continue;
    sets.push(`${attr} = ${placeholder}`);
    values[placeholder] = value;
  }
  let condition =
    '(attribute_not_exists(eventCreated) OR eventCreated < :created OR (eventCreated = :created AND (attribute_not_exists(statusRank) OR statusRank <= :rank)))';
  const conditionValues: Record<string, unknown> = {};
  if (!ACTIVE_STATUSES.has(change.status)) {
    condition += ' AND (attribute_not_exists(subscriptionId) OR subscriptionId = :sid OR NOT (#status IN (:active, :trialing)))';
    Object.assign(conditionValues, { ':active': 'active', ':trialing': 'trialing' });
  }
  const names: Record<string, string> = { '#status': 'status', ...(change.plan ? { '#plan': 'plan' } : {}) };
  const subscription = tx.update(
    keys.subscription(userId),
    { expression: `SET ${sets.join(', ')}`, names, values },
    { expression: condition, values: conditionValues },
  );
  const profile = change.plan
    ? tx.update(
        keys.profile(userId),
        { expression: 'SET #plan = :plan, updatedAt = :now', names: { '#plan': 'plan' }, values: { ':plan': change.plan, ':now': now.toISOString() } },
        { expression: 'attribute_exists(pk)' },
      )
    : profileExists(userId);
  return applyOnce(event, userId, [subscription, profile, ...extra], { 1: 'stale', 2: 'ignored' }, now);
}
