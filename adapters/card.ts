import type Stripe from 'stripe';
import { CARD_CURRENCY, type CardConfig, cardConfig } from '#platform/config';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';
import { outsideCallBudgetMs } from '#platform/deadline';

/**
 * The card processor (Stripe) behind one small interface: hosted checkout sessions and webhook
 * signature checks. The official SDK talks to the real API in AWS; tests point it at a fake server
 * on loopback through CARD_API_HOST/PORT/PROTOCOL. Without a secret key (or a price) the routes
 * answer 503 CARD_NOT_CONFIGURED, except in the local stack's CARD_MODE=local (card-local.ts).
 */

export type CheckoutKind = 'subscription' | 'credits' | 'storage' | 'gateway-call';

export interface CheckoutSession {
  sessionId: string;
  url: string;
}

interface Buyer {
  userId: string;
  email?: string;
  /** The processor's customer of an earlier checkout, so one user stays one customer there. */
  customerId?: string;
}

export const cardNotConfigured = (what = 'card payments are not configured') => new DomainError('unavailable', what, 'CARD_NOT_CONFIGURED');

/** The SDK, imported on the first processor call of a container; a processor error can only come after it. */
let loadedSdk: typeof import('./stripe-sdk') | undefined;
const stripeSdk = async () => (loadedSdk ??= await import('./stripe-sdk'));

const clients = new WeakMap<CardConfig, Stripe>();

/** One SDK client per configuration (tests and the local stack reload it). */
async function client(): Promise<Stripe> {
  const c = cardConfig();
  const cached = clients.get(c);
  if (cached) return cached;
  if (!c.secretKey) throw cardNotConfigured();
  const { host, port, protocol } = c.api;
  const { Stripe } = await stripeSdk();
  const stripe = new Stripe(c.secretKey, {
    ...(host ? { host } : {}),
    ...(port ? { port } : {}),
    ...(protocol ? { protocol } : {}),
    timeout: c.timeoutMs,
    // One retry, with the idempotency key the SDK adds, so a dropped connection cannot create two sessions.
    maxNetworkRetries: 1,
    telemetry: false,
  });
  clients.set(c, stripe);
  return stripe;
}

/** What stripe-node may sleep before its one retry (0.5 s with jitter), with room to spare. */
const RETRY_BACKOFF_ALLOWANCE_MS = 1000;

/**
 * Per-call bounds: CARD_TIMEOUT_MS per attempt and one retry while the request's deadline leaves
 * room for both (platform/deadline.ts); otherwise one attempt in the time that is left, so a hung
 * processor answers CARD_PROCESSOR_ERROR before the function is cut off.
 */
function bounded(): Stripe.RequestOptions {
  const perAttempt = cardConfig().timeoutMs;
  const withRetry = 2 * perAttempt + RETRY_BACKOFF_ALLOWANCE_MS;
  const budget = outsideCallBudgetMs(withRetry);
  return budget >= withRetry ? { timeout: perAttempt, maxNetworkRetries: 1 } : { timeout: budget, maxNetworkRetries: 0 };
}

/** A processor failure is the processor's, not ours: 502 with its request id in the log only. */
function processorFailure(err: unknown): never {
  if (err instanceof DomainError) throw err;
  if (loadedSdk && err instanceof loadedSdk.Stripe.errors.StripeError) {
    logger().warn('card processor call failed', { type: err.type, code: err.code, statusCode: err.statusCode, requestId: err.requestId });
    throw new DomainError('upstreamFailed', 'the card processor is unavailable, try again', 'CARD_PROCESSOR_ERROR');
  }
  throw err;
}

function customerFields(buyer: Buyer): Pick<Stripe.Checkout.SessionCreateParams, 'customer' | 'customer_email'> {
  if (buyer.customerId) return { customer: buyer.customerId };
  return buyer.email ? { customer_email: buyer.email } : {};
}

/** A secret key, or the local stack's local card mode, which needs none. */
const canCharge = () => cardConfig().mode === 'local' || !!cardConfig().secretKey;

async function createSession(params: Stripe.Checkout.SessionCreateParams): Promise<CheckoutSession> {
  const c = cardConfig();
  if (c.mode === 'local') return (await import('./card-local')).createLocalSession({ success_url: c.successUrl, cancel_url: c.cancelUrl, ...params });
  let session: Stripe.Checkout.Session;
  try {
    session = await (await client()).checkout.sessions.create(
      {
        currency: CARD_CURRENCY,
        success_url: c.successUrl,
        cancel_url: c.cancelUrl,
        ...params,
      },
      bounded(),
    );
  } catch (err) {
    processorFailure(err);
  }
  if (!session.url) {
    logger().warn('card checkout session has no url', { sessionId: session.id });
    throw new DomainError('upstreamFailed', 'the card processor gave no checkout page', 'CARD_PROCESSOR_ERROR');
  }
  return { sessionId: session.id, url: session.url };
}

export function planPriceId(plan: string): string {
  const configured = cardConfig().planPrices[plan as keyof CardConfig['planPrices']];
  const price = configured ?? (cardConfig().mode === 'local' ? `price_local_${plan}` : undefined);
  if (!price || !canCharge()) throw cardNotConfigured(`card payments for the ${plan} plan are not configured`);
  return price;
}

/** A subscription checkout; the webhook activates the plan when the processor confirms payment. */
export function createSubscriptionCheckout(buyer: Buyer, plan: string, extra: Record<string, string> = {}): Promise<CheckoutSession> {
  const price = planPriceId(plan);
  const metadata = { ...extra, userId: buyer.userId, plan, kind: 'subscription' satisfies CheckoutKind };
  return createSession({
    mode: 'subscription',
    line_items: [{ price, quantity: 1 }],
    client_reference_id: buyer.userId,
    ...customerFields(buyer),
    metadata,
    // Subscription events carry the subscription's own metadata, not the session's.
    subscription_data: { metadata: { userId: buyer.userId, plan } },
  });
}

/** `credits`: what the pack at `priceId` gives, from the packs on sale (domain/billing/credit-packs.ts). */
export function createCreditsCheckout(buyer: Buyer, priceId: string, credits: number): Promise<CheckoutSession> {
  if (!canCharge()) throw cardNotConfigured();
  return createSession({
    mode: 'payment',
    line_items: [{ price: priceId, quantity: 1 }],
    client_reference_id: buyer.userId,
    ...customerFields(buyer),
    metadata: { userId: buyer.userId, kind: 'credits' satisfies CheckoutKind, credits: String(credits), price: priceId },
  });
}

export function createStorageCheckout(buyer: Buyer, storageGb: number): Promise<CheckoutSession> {
  const price = cardConfig().storagePrice;
  if (!price || !canCharge()) throw cardNotConfigured('storage upgrades are not configured');
  return createSession({
    mode: 'payment',
    line_items: [{ price, quantity: storageGb }],
    client_reference_id: buyer.userId,
    ...customerFields(buyer),
    metadata: { userId: buyer.userId, kind: 'storage' satisfies CheckoutKind, storageGb: String(storageGb) },
  });
}

/** One gateway call, paid once at its card price (domain/payments/gateway-card.ts) by a caller without an account. */
export interface GatewayCallPurchase {
  plugin: string;
  price: { minor: number; currency: string };
  /** SHA-256 of the receipt token the payer is given; the webhook stores the receipt under it. */
  receiptHash: string;
  successUrl: string;
  cancelUrl: string;
}

/** A one-off checkout in payment mode at the call's price; the card webhook turns it into a prepaid receipt (metadata `kind` `gateway-call`). */
export function createGatewayCallCheckout(call: GatewayCallPurchase): Promise<CheckoutSession> {
  if (!canCharge()) throw cardNotConfigured();
  return createSession({
    mode: 'payment',
    currency: call.price.currency,
    line_items: [
      {
        price_data: { currency: call.price.currency, unit_amount: call.price.minor, product_data: { name: `One ${call.plugin} call (v1 gateway)` } },
        quantity: 1,
      },
    ],
    metadata: { kind: 'gateway-call' satisfies CheckoutKind, plugin: call.plugin, receipt: call.receiptHash },
    success_url: call.successUrl,
    cancel_url: call.cancelUrl,
  });
}

/** The fields of a processor event this platform reads; the rest stays opaque. */
export interface CardEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

/** How far ahead of our clock a signature or event date may be. */
const CARD_CLOCK_SKEW_SECONDS = 60;

/**
 * Verifies the processor's signature over the exact raw body (HMAC with the endpoint secret and a
 * timestamp tolerance) and returns the event. Missing, bad or stale signature → 400; no secret → 503.
 */
export async function verifyCardWebhook(rawBody: string, signature: string | undefined): Promise<CardEvent> {
  const invalid = () => new DomainError('invalid', 'invalid card webhook signature', 'INVALID_SIGNATURE');
  if (!signature) throw invalid();
  const { webhookSecret, webhookToleranceSeconds } = cardConfig();
  if (!webhookSecret) throw cardNotConfigured('the card webhook secret is not configured');
  const { Stripe } = await stripeSdk();
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, webhookSecret, webhookToleranceSeconds);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError || err instanceof SyntaxError) throw invalid();
    throw err;
  }
  // The SDK checks only the age of the signature: one dated ahead would stay replayable past the tolerance.
  const nowSeconds = Math.floor(Date.now() / 1000);
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
  if (!Number.isFinite(signedAt) || signedAt > nowSeconds + CARD_CLOCK_SKEW_SECONDS) throw invalid();
  const e = event as unknown as Partial<CardEvent>;
  if (typeof e.created === 'number' && e.created > nowSeconds + CARD_CLOCK_SKEW_SECONDS)
    throw new DomainError('invalid', 'card event is dated in the future', 'INVALID_EVENT');
  if (typeof e.id !== 'string' || typeof e.type !== 'string' || typeof e.created !== 'number' || typeof e.data?.object !== 'object' || e.data.object === null) {
    throw new DomainError('invalid', 'not a card event', 'INVALID_EVENT');
  }
  return e as CardEvent;
}

// --- subscription changes ------------------------------------------------------------------------

export interface SubscriptionChangeResult {
  subscriptionId: string;
  status: string;
  priceId: string;
}

/**
 * Moves the subscription's one item to the plan's price, prorated as the processor prorates
 * (`create_prorations`: credit for the unused time, charge for the new plan's share on the next
 * invoice). The account's plan changes when the processor's `customer.subscription.updated`
 * webhook arrives, as with every other subscription change.
 */
export async function changePlan(subscriptionId: string, plan: string): Promise<SubscriptionChangeResult> {
  const price = planPriceId(plan);
  if (cardConfig().mode === 'local') return (await import('./card-local')).changeLocalPlan(subscriptionId, plan, price);
  try {
    const stripe = await client();
    const current = await stripe.subscriptions.retrieve(subscriptionId, undefined, bounded());
    const item = current.items.data[0];
    if (!item) throw new DomainError('conflict', 'the subscription has no item to change', 'SUBSCRIPTION_UNCHANGEABLE');
    const updated = await stripe.subscriptions.update(
      subscriptionId,
      {
        items: [{ id: item.id, price }],
        proration_behavior: 'create_prorations',
        metadata: { ...current.metadata, plan },
      },
      bounded(),
    );
    return { subscriptionId: updated.id, status: updated.status, priceId: price };
  } catch (err) {
    processorFailure(err);
  }
}

/** The processor's hosted billing portal for a customer: update the card, see invoices, cancel. */
export async function createPortalSession(customerId: string, returnUrl: string): Promise<{ url: string }> {
  if (cardConfig().mode === 'local') return { url: (await import('./card-local')).localPortalUrl(returnUrl) };
  try {
    const session = await (await client()).billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }, bounded());
    return { url: session.url };
  } catch (err) {
    processorFailure(err);
  }
}

/** Cancels at once (account deletion); cancelling one that is already cancelled or gone is not an error. */
export async function cancelSubscription(subscriptionId: string): Promise<{ status: string }> {
  if (cardConfig().mode === 'local') return (await import('./card-local')).cancelLocalSubscription(subscriptionId);
  try {
    return { status: (await (await client()).subscriptions.cancel(subscriptionId, undefined, bounded())).status };
  } catch (err) {
    if (loadedSdk && err instanceof loadedSdk.Stripe.errors.StripeInvalidRequestError && (err.statusCode === 404 || err.code === 'resource_missing'))
      return { status: 'canceled' };
    processorFailure(err);
  }
}
