import * as z from 'zod/mini';
import type { CardEvent } from '#adapters/card';
import { cardConfig } from '#platform/config';
import { isGatewayPluginId } from '#contract/gateway';
import { GATEWAY_RECEIPT_HASH, gatewayReceiptItem } from '#data/gateway-receipts';
import {
  accountExistsItem,
  cardCustomerItems,
  cardEventItem,
  findUserIdByCardCustomer,
  profilePlanItem,
  storageGrantItem,
  subscriptionStateItem,
} from '#data/subscriptions';
import { ConditionFailedError } from '#data/failures';
import { transact, transactRetrying, type TransactItem } from '#data/writes';
import { logger } from '#platform/logger';
import { creditEntryId, creditItems } from './credits';
import { ACTIVE_STATUSES } from './entitlements';
import { isPlanName, type PlanName } from './plans';
import { stopWithoutSubscription } from './subscription-end';
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
 * (`accountAccess` answers from it). Once none is in force, the account's instance is stopped
 * (./subscription-end.ts).
 */

export type EventOutcome = 'applied' | 'duplicate' | 'stale' | 'ignored';

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

/** Marks an event handled without any effect (stale, unknown user, nothing to do). */
async function recordOnly(event: CardEvent, userId: string | undefined, outcome: EventOutcome, now: Date): Promise<EventOutcome> {
  try {
    await transact([cardEventItem(event, userId, outcome, now)]);
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
    await transactRetrying([cardEventItem(event, userId, 'applied', now), ...effect]);
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
    return applyOnce(event, userId, [...grant, ...cardCustomerItems(customerId, userId)], { 1: 'ignored', 2: 'duplicate' }, now);
  }

  if (kind === 'storage') {
    const storageGb = positiveIntOf(metadata.storageGb, MAX_STORAGE_GB_PER_PURCHASE);
    if (!paid || !storageGb) return recordOnly(event, userId, 'ignored', now);
    const grant = storageGrantItem(userId, storageGb, now);
    return applyOnce(event, userId, [accountExistsItem(userId), grant, ...cardCustomerItems(customerId, userId)], { 1: 'ignored' }, now);
  }

  const subscriptionId = idOf(session.subscription);
  const plan = isPlanName(metadata.plan) ? metadata.plan : undefined;
  if (kind !== 'subscription' || !subscriptionId || !paid) return recordOnly(event, userId, 'ignored', now);
  return applySubscription(event, { userId, subscriptionId, status: 'active', plan, customerId }, now, cardCustomerItems(customerId, userId));
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
  if (!userId && customerId) userId = await findUserIdByCardCustomer(customerId);
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
  const subscription = subscriptionStateItem(
    { ...change, statusRank: statusRank(change.status), eventId: event.id, eventCreated: event.created, keepOtherActive: !ACTIVE_STATUSES.has(change.status) },
    now,
  );
  const profile = change.plan ? profilePlanItem(userId, change.plan, now) : accountExistsItem(userId);
  const outcome = await applyOnce(event, userId, [subscription, profile, ...extra], { 1: 'stale', 2: 'ignored' }, now);
  // After the write, so the stop judges the stored state (a newer active subscription keeps the
  // instance). A redelivery retries a stop that failed; a failure here fails the delivery, so the
  // processor sends the event again.
  if (!ACTIVE_STATUSES.has(change.status) && (outcome === 'applied' || outcome === 'duplicate')) await stopWithoutSubscription(userId, now);
  return outcome;
}
