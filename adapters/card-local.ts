import { createHash, randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { config, cardConfig } from '#platform/config';
import { DomainError } from '#platform/errors';

/**
 * CARD_MODE=local: the card processor for the local stack, needing no account. A checkout session
 * is stored and its URL is a page of the local server (local/pages.ts). Completing it there
 * builds the events the processor would send (`checkout.session.completed`, paid, and for a plan
 * `customer.subscription.created` with its billing period), signs them with the webhook secret in
 * the processor's signature format and posts them to `POST /api/webhooks/card`, so the plan is
 * granted by the same verification and event handling as in production. A plan change sends
 * `customer.subscription.updated` the same way. No money moves; config.ts refuses this mode in AWS.
 */

export const LOCAL_CHECKOUT_PAGE = '/local-card/checkout';
/** The local stand-in for the processor's hosted billing portal. */
export const LOCAL_PORTAL_PAGE = '/local-card/portal';

/** A checkout session of the local card page. */
export interface LocalCheckoutRecord {
  sessionId: string;
  mode: 'subscription' | 'payment';
  /** None for a buyer without an account (a one-off gateway call). */
  userId?: string;
  customerId?: string;
  /** A one-off price in minor units, and its currency. */
  amountTotal?: number;
  currency?: string;
  metadata: Record<string, string>;
  /** A plan's recurring price and the metadata its subscription carries (`subscription_data`). */
  priceId?: string;
  subscriptionMetadata?: Record<string, string>;
  successUrl: string;
  cancelUrl: string;
  createdAt: number;
}

/**
 * Where the local processor keeps its sessions, as the real processor keeps its own: given by the
 * local stack (local/pages.ts, which serves the checkout pages) from the data layer, since an
 * adapter never reaches the table itself.
 */
export interface LocalCheckoutStore {
  save(record: LocalCheckoutRecord): Promise<void>;
  /** Reads a session without taking it (the page shows what is being bought). */
  peek(sessionId: string): Promise<LocalCheckoutRecord | undefined>;
  /** Takes the session once: a second completion (a double click, a replay) finds nothing. */
  take(sessionId: string, nowSeconds: number): Promise<LocalCheckoutRecord | undefined>;
  saveSubscription(record: LocalSubscriptionRecord): Promise<void>;
  subscription(subscriptionId: string): Promise<LocalSubscriptionRecord | undefined>;
}

/** A subscription the local processor holds, as the processor holds its own. */
export interface LocalSubscriptionRecord {
  subscriptionId: string;
  itemId: string;
  customerId: string | null;
  priceId: string;
  status: 'active' | 'canceled';
  metadata: Record<string, string>;
  /** The billing period, in seconds since the epoch. */
  periodStart: number;
  periodEnd: number;
}

let sessions: LocalCheckoutStore | undefined;

export function keepLocalCheckoutsIn(store: LocalCheckoutStore): void {
  sessions = store;
}

function sessionStore(): LocalCheckoutStore {
  if (!sessions) throw new Error('CARD_MODE=local runs in the local stack (npm start), which keeps the checkout sessions');
  return sessions;
}

const asStrings = (metadata: Stripe.MetadataParam | null | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, String(v)]));
const newId = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;
/** One user stays one customer, as with the processor. */
const customerOf = (userId: string) => `cus_local_${createHash('sha256').update(userId).digest('hex').slice(0, 24)}`;
/** The session's customer; a buyer without an account (a gateway call) is a guest: none. */
const customerOfSession = (session: LocalCheckoutRecord) => session.customerId ?? (session.userId ? customerOf(session.userId) : null);

export async function createLocalSession(params: Stripe.Checkout.SessionCreateParams): Promise<{ sessionId: string; url: string }> {
  const userId = params.client_reference_id ?? undefined;
  const sessionId = newId('cs');
  const line = params.line_items?.[0];
  await sessionStore().save({
    sessionId,
    mode: params.mode === 'subscription' ? 'subscription' : 'payment',
    userId,
    customerId: typeof params.customer === 'string' ? params.customer : undefined,
    metadata: asStrings(params.metadata),
    ...(params.mode === 'subscription' && typeof line?.price === 'string'
      ? { priceId: line.price, subscriptionMetadata: asStrings(params.subscription_data?.metadata) }
      : {}),
    // A one-off price (a gateway call) is shown on the page and carried by the event, as the processor does.
    ...(line?.price_data?.unit_amount !== undefined
      ? { amountTotal: line.price_data.unit_amount * (line.quantity ?? 1), currency: line.price_data.currency }
      : {}),
    successUrl: params.success_url ?? cardConfig().successUrl,
    cancelUrl: params.cancel_url ?? cardConfig().cancelUrl,
    createdAt: Math.floor(Date.now() / 1000),
  });
  return { sessionId, url: new URL(`${LOCAL_CHECKOUT_PAGE}/${sessionId}`, config().appUrl).href };
}

export const describeLocalCheckout = (sessionId: string) => sessionStore().peek(sessionId);

/** The event the processor sends when a checkout is paid, for this session. */
function completedEvent(session: LocalCheckoutRecord, subscriptionId: string | null, now: number) {
  return {
    id: newId('evt'),
    object: 'event',
    type: 'checkout.session.completed',
    created: now,
    livemode: false,
    data: {
      object: {
        id: session.sessionId,
        object: 'checkout.session',
        mode: session.mode,
        created: session.createdAt,
        client_reference_id: session.userId ?? null,
        payment_status: 'paid',
        status: 'complete',
        metadata: session.metadata,
        ...(session.amountTotal !== undefined ? { amount_total: session.amountTotal, currency: session.currency } : {}),
        customer: customerOfSession(session),
        subscription: subscriptionId,
      },
    },
  };
}

export type LocalCompletion = { outcome: 'paid'; redirect: string } | { outcome: 'unknown' } | { outcome: 'webhook-refused'; status: number; body: string };

/** The processor's subscription event for `sub` (its period on the item, as newer API versions keep it). */
function subscriptionEvent(type: `customer.subscription.${'created' | 'updated'}`, sub: LocalSubscriptionRecord, now: number) {
  return {
    id: newId('evt'),
    object: 'event',
    type,
    created: now,
    livemode: false,
    data: {
      object: {
        id: sub.subscriptionId,
        object: 'subscription',
        status: sub.status,
        customer: sub.customerId,
        metadata: sub.metadata,
        cancel_at_period_end: false,
        items: {
          object: 'list',
          data: [
            {
              id: sub.itemId,
              object: 'subscription_item',
              current_period_start: sub.periodStart,
              current_period_end: sub.periodEnd,
              price: { id: sub.priceId },
            },
          ],
        },
      },
    },
  };
}

/** A monthly plan's period: the same day and time a calendar month later, or that month's last day (31 January to 28 February). */
export function monthAfter(seconds: number): number {
  const start = new Date(seconds * 1000);
  const lastDay = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 2, 0)).getUTCDate();
  const end = new Date(start);
  end.setUTCDate(1);
  end.setUTCMonth(start.getUTCMonth() + 1);
  end.setUTCDate(Math.min(start.getUTCDate(), lastDay));
  return Math.floor(end.getTime() / 1000);
}

type Delivery = { ok: true } | { ok: false; status: number; body: string };

/** Signs `event` as the processor does and posts it to the platform's card webhook. */
async function deliver(event: object, webhookUrl: string, now: number): Promise<Delivery> {
  const secret = cardConfig().webhookSecret;
  if (!secret) throw new Error('CARD_MODE=local needs CARD_WEBHOOK_SECRET (the local stack generates one)');
  const payload = JSON.stringify(event);
  const { Stripe } = await import('./stripe-sdk');
  const res = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: now }) },
    body: payload,
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  return res.ok ? { ok: true } : { ok: false, status: res.status, body: await res.text() };
}

/**
 * Completes the session once and delivers its signed events to `webhookUrl` (the local server's
 * own `POST /api/webhooks/card`). The redirect is the session's success page.
 */
export async function completeLocalCheckout(sessionId: string, webhookUrl: string): Promise<LocalCompletion> {
  const now = Math.floor(Date.now() / 1000);
  const session = await sessionStore().take(sessionId, now);
  if (!session) return { outcome: 'unknown' };
  const customerId = customerOfSession(session);
  const subscription: LocalSubscriptionRecord | undefined =
    session.mode === 'subscription' && session.priceId
      ? {
          subscriptionId: newId('sub'),
          itemId: newId('si'),
          customerId,
          priceId: session.priceId,
          status: 'active',
          metadata: session.subscriptionMetadata ?? {},
          periodStart: now,
          periodEnd: monthAfter(now),
        }
      : undefined;
  if (subscription) await sessionStore().saveSubscription(subscription);
  const events = [
    completedEvent(session, subscription?.subscriptionId ?? null, now),
    ...(subscription ? [subscriptionEvent('customer.subscription.created', subscription, now)] : []),
  ];
  for (const event of events) {
    const delivered = await deliver(event, webhookUrl, now);
    if (!delivered.ok) return { outcome: 'webhook-refused', status: delivered.status, body: delivered.body };
  }
  return { outcome: 'paid', redirect: session.successUrl.replace('{CHECKOUT_SESSION_ID}', session.sessionId) };
}

const localWebhookUrl = () => new URL('/api/webhooks/card', config().appUrl).href;

/** A subscription of this processor, or a conflict the console words (the processor's own answer for an unknown one). */
async function heldSubscription(subscriptionId: string): Promise<LocalSubscriptionRecord> {
  const sub = await sessionStore().subscription(subscriptionId);
  if (sub?.status !== 'active')
    throw new DomainError('conflict', 'the local card processor holds no active subscription by this id', 'SUBSCRIPTION_UNCHANGEABLE');
  return sub;
}

/**
 * A plan change at the local processor: the subscription moves to `priceId` for the rest of its
 * period, and the processor's `customer.subscription.updated` reaches the webhook before this
 * answers, as the real one usually does within a second.
 */
export async function changeLocalPlan(
  subscriptionId: string,
  plan: string,
  priceId: string,
): Promise<{ subscriptionId: string; status: string; priceId: string }> {
  const sub = await heldSubscription(subscriptionId);
  const changed: LocalSubscriptionRecord = { ...sub, priceId, metadata: { ...sub.metadata, plan } };
  await sessionStore().saveSubscription(changed);
  const now = Math.floor(Date.now() / 1000);
  const delivered = await deliver(subscriptionEvent('customer.subscription.updated', changed, now), localWebhookUrl(), now);
  if (!delivered.ok) throw new DomainError('upstreamFailed', `the card webhook answered ${delivered.status} to the plan change`, 'CARD_PROCESSOR_ERROR');
  return { subscriptionId, status: changed.status, priceId };
}

/**
 * Cancels at once, which only account deletion asks for. That deletion removes the account's
 * subscription record itself, so no event is sent.
 */
export async function cancelLocalSubscription(subscriptionId: string): Promise<{ status: string }> {
  const sub = await sessionStore().subscription(subscriptionId);
  if (sub && sub.status !== 'canceled') await sessionStore().saveSubscription({ ...sub, status: 'canceled' });
  return { status: 'canceled' };
}

/** The local billing portal: a page of the local server that says what it offers (nothing is charged). */
export function localPortalUrl(returnUrl: string): string {
  const url = new URL(LOCAL_PORTAL_PAGE, config().appUrl);
  url.searchParams.set('return', returnUrl);
  return url.href;
}
