import { createHash, randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { config, cardConfig } from '#platform/config';

/**
 * CARD_MODE=local: the card processor for the local stack, needing no account. A checkout session
 * is stored and its URL is a page of the local server (local/pages.ts). Completing it there
 * builds the event the processor would send (`checkout.session.completed`, paid), signs it with the
 * webhook secret in the processor's signature format and posts it to `POST /api/webhooks/card`,
 * so the plan is granted by the same verification and event handling as in production. No money
 * moves; config.ts refuses this mode in AWS.
 */

export const LOCAL_CHECKOUT_PAGE = '/local-card/checkout';

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
}

let sessions: LocalCheckoutStore | undefined;

export function keepLocalCheckoutsIn(store: LocalCheckoutStore): void {
  sessions = store;
}

function sessionStore(): LocalCheckoutStore {
  if (!sessions) throw new Error('CARD_MODE=local runs in the local stack (npm start), which keeps the checkout sessions');
  return sessions;
}

const newId = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;
/** One user stays one customer, as with the processor. */
const customerOf = (userId: string) => `cus_local_${createHash('sha256').update(userId).digest('hex').slice(0, 24)}`;

export async function createLocalSession(params: Stripe.Checkout.SessionCreateParams): Promise<{ sessionId: string; url: string }> {
  const userId = params.client_reference_id ?? undefined;
  const sessionId = newId('cs');
  const line = params.line_items?.[0];
  await sessionStore().save({
    sessionId,
    mode: params.mode === 'subscription' ? 'subscription' : 'payment',
    userId,
    customerId: typeof params.customer === 'string' ? params.customer : undefined,
    metadata: Object.fromEntries(Object.entries(params.metadata ?? {}).map(([k, v]) => [k, String(v)])),
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
function completedEvent(session: LocalCheckoutRecord, now: number) {
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
        // A buyer without an account (a gateway call) is a guest: no customer.
        customer: session.customerId ?? (session.userId ? customerOf(session.userId) : null),
        subscription: session.mode === 'subscription' ? newId('sub') : null,
      },
    },
  };
}

export type LocalCompletion = { outcome: 'paid'; redirect: string } | { outcome: 'unknown' } | { outcome: 'webhook-refused'; status: number; body: string };

/**
 * Completes the session once and delivers its signed event to `webhookUrl` (the local server's
 * own `POST /api/webhooks/card`). The redirect is the session's success page.
 */
export async function completeLocalCheckout(sessionId: string, webhookUrl: string): Promise<LocalCompletion> {
  const secret = cardConfig().webhookSecret;
  if (!secret) throw new Error('CARD_MODE=local needs CARD_WEBHOOK_SECRET (the local stack generates one)');
  const now = Math.floor(Date.now() / 1000);
  const session = await sessionStore().take(sessionId, now);
  if (!session) return { outcome: 'unknown' };
  const payload = JSON.stringify(completedEvent(session, now));
  const { Stripe } = await import('./stripe-sdk');
  const res = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: now }) },
    body: payload,
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) return { outcome: 'webhook-refused', status: res.status, body: await res.text() };
  return { outcome: 'paid', redirect: session.successUrl.replace('{CHECKOUT_SESSION_ID}', session.sessionId) };
}
