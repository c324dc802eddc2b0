import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { call } from './api';

/**
 * A small card processor on loopback that speaks the real wire format the official SDK uses:
 * form-encoded POST bodies with bracketed keys (`metadata[plan]=solo`, `line_items[0][price]=..`),
 * Bearer secret keys, JSON objects and Stripe's error envelope. It implements what the platform
 * calls (checkout sessions; retrieving, updating and cancelling subscriptions; billing portal
 * sessions) and records every request so tests can check what was sent. Subscriptions it knows
 * are the ones a test seeds with `addSubscription` (checkout completion happens by webhook).
 */

export interface FakeSubscription {
  id: string;
  customer: string;
  status: string;
  price: string;
  itemId: string;
  metadata: Record<string, string>;
  /** Every price change with the proration the platform asked for. */
  changes: { price: string; proration: string | undefined }[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: Record<string, unknown>;
}

export type FakeCheckoutSession = ReturnType<typeof checkoutSession>;

export interface FakeStripe {
  secretKey: string;
  /** Every checkout session created, by id. */
  sessions: Map<string, FakeCheckoutSession>;
  port: number;
  requests: RecordedRequest[];
  /** Settings that point the platform's SDK here (pass to reloadConfig). */
  env: Record<string, string>;
  /** The next API call fails with this status and Stripe error type. */
  failNext(status: number, type?: string): void;
  subscriptions: Map<string, FakeSubscription>;
  addSubscription(s: { id: string; customer: string; price: string; userId?: string; plan?: string; status?: string }): FakeSubscription;
  close(): Promise<void>;
}

/** `a[b][0][c]=v` → {a: {b: [{c: v}]}}, as Stripe reads its form bodies. */
export function parseStripeForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = rawKey.split(/[[\]]+/).filter(Boolean);
    let node: Record<string, unknown> | unknown[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const container = node as Record<string, unknown>;
      if (last) {
        container[part] = value;
        return;
      }
      container[part] ??= /^\d+$/.test(path[i + 1]!) ? [] : {};
      node = container[part] as Record<string, unknown>;
    });
  }
  return root;
}

const stripeId = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

/** What the processor totals from `line_items[n][price_data]` (ad-hoc prices); null for catalogue price ids, which it does not know here. */
function amountTotal(form: Record<string, any>): number | null {
  const lines = (form.line_items ?? []) as { price_data?: { unit_amount?: string }; quantity?: string }[];
  if (!lines.length || lines.some((l) => l.price_data?.unit_amount === undefined)) return null;
  return lines.reduce((sum, l) => sum + Number(l.price_data!.unit_amount) * Number(l.quantity ?? 1), 0);
}

function checkoutSession(form: Record<string, any>) {
  const id = stripeId('cs');
  const created = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'checkout.session',
    livemode: false,
    mode: form.mode ?? 'payment',
    status: 'open',
    payment_status: 'unpaid',
    currency: form.currency ?? null,
    amount_total: amountTotal(form),
    client_reference_id: form.client_reference_id ?? null,
    customer: form.customer ?? null,
    customer_email: form.customer_email ?? null,
    metadata: form.metadata ?? {},
    subscription: null,
    payment_intent: null,
    success_url: form.success_url ?? null,
    cancel_url: form.cancel_url ?? null,
    created,
    expires_at: created + 86400,
    // Stripe's hosted page; never fetched in tests.
    url: `https://checkout.stripe.com/c/pay/${id}#fidkdWxOYHwnPyd1blpxYHZxWjA0`,
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': stripeId('req'), ...headers });
  res.end(JSON.stringify(body));
}

const stripeError = (type: string, message: string) => ({ error: { type, message } });

function subscriptionObject(sub: FakeSubscription) {
  const start = Math.floor(Date.now() / 1000) - 86400;
  return {
    id: sub.id,
    object: 'subscription',
    status: sub.status,
    customer: sub.customer,
    metadata: sub.metadata,
    cancel_at_period_end: false,
    items: {
      object: 'list',
      data: [
        {
          id: sub.itemId,
          object: 'subscription_item',
          current_period_start: start,
          current_period_end: start + 30 * 86400,
          price: { id: sub.price, object: 'price' },
        },
      ],
    },
  };
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const secretKey = `sk_test_${randomBytes(16).toString('hex')}`;
  const requests: RecordedRequest[] = [];
  let failure: { status: number; type: string } | undefined;
  const subscriptions = new Map<string, FakeSubscription>();
  const sessions = new Map<string, FakeCheckoutSession>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = parseStripeForm(Buffer.concat(chunks).toString('utf8'));
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, form });
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        return send(res, 401, stripeError('invalid_request_error', 'Invalid API Key provided'));
      }
      if (failure) {
        const { status, type } = failure;
        failure = undefined;
        // The SDK would otherwise retry a 5xx once; Stripe says when a retry is pointless.
        return send(res, status, stripeError(type, 'simulated failure'), { 'stripe-should-retry': 'false' });
      }
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        if (req.headers['content-type'] !== 'application/x-www-form-urlencoded')
          return send(res, 400, stripeError('invalid_request_error', 'form body expected'));
        const session = checkoutSession(form);
        sessions.set(session.id, session);
        return send(res, 200, session);
      }
      const subscriptionPath = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
      if (subscriptionPath) {
        const sub = subscriptions.get(decodeURIComponent(subscriptionPath[1]!));
        if (!sub) return send(res, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such subscription' } });
        if (req.method === 'DELETE') sub.status = 'canceled';
        if (req.method === 'POST') {
          const items = (form.items ?? []) as { id?: string; price?: string }[];
          const item = items[0];
          if (!item || item.id !== sub.itemId || !item.price)
            return send(res, 400, stripeError('invalid_request_error', 'items[0][id] must be the subscription item'));
          sub.price = item.price;
          sub.changes.push({ price: item.price, proration: form.proration_behavior as string | undefined });
          Object.assign(sub.metadata, (form.metadata ?? {}) as Record<string, string>);
        }
        return send(res, 200, subscriptionObject(sub));
      }
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
        if (!form.customer || !form.return_url) return send(res, 400, stripeError('invalid_request_error', 'customer and return_url are required'));
        const id = stripeId('bps');
        return send(res, 200, {
          id,
          object: 'billing_portal.session',
          customer: form.customer,
          return_url: form.return_url,
          url: `https://billing.stripe.com/p/session/${id}`,
        });
      }
      return send(res, 404, stripeError('invalid_request_error', `Unrecognized request URL (${req.method}: ${path})`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    secretKey,
    sessions,
    port,
    requests,
    env: { CARD_SECRET_KEY: secretKey, CARD_API_HOST: '127.0.0.1', CARD_API_PORT: String(port), CARD_API_PROTOCOL: 'http' },
    failNext: (status, type = 'api_error') => {
      failure = { status, type };
    },
    subscriptions,
    addSubscription: ({ id, customer, price, userId, plan, status = 'active' }) => {
      const metadata: Record<string, string> = {};
      if (userId) metadata.userId = userId;
      if (plan) metadata.plan = plan;
      const sub: FakeSubscription = { id, customer, status, price, itemId: stripeId('si'), metadata, changes: [] };
      subscriptions.set(id, sub);
      return sub;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;

/** Signs a payload exactly as the processor does, with the SDK's own test helper. */
export function signPayload(payload: string, secret = WEBHOOK_SECRET, timestamp = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

let eventCounter = 0;
export const eventId = () => `evt_test_${randomBytes(8).toString('hex')}${++eventCounter}`;

export interface EventOptions {
  id?: string;
  created?: number;
}

function event(type: string, object: Record<string, unknown>, opts: EventOptions = {}) {
  return {
    id: opts.id ?? eventId(),
    object: 'event',
    api_version: '2025-10-29.clover',
    created: opts.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

export function checkoutCompleted(
  s: {
    userId: string;
    plan?: string;
    subscription?: string;
    customer?: string;
    sessionId?: string;
    metadata?: Record<string, string>;
    mode?: string;
    paymentStatus?: string;
  },
  opts: EventOptions = {},
) {
  const mode = s.mode ?? 'subscription';
  return event(
    'checkout.session.completed',
    {
      id: s.sessionId ?? stripeId('cs'),
      object: 'checkout.session',
      mode,
      status: 'complete',
      payment_status: s.paymentStatus ?? 'paid',
      currency: 'gbp',
      client_reference_id: s.userId,
      customer: s.customer ?? stripeId('cus'),
      subscription: mode === 'subscription' ? (s.subscription ?? stripeId('sub')) : null,
      metadata: s.metadata ?? { userId: s.userId, plan: s.plan ?? 'solo', kind: 'subscription' },
      created: opts.created ?? Math.floor(Date.now() / 1000),
    },
    opts,
  );
}

/** `checkout.session.completed` for a session this fake created, paid, as the processor sends it. */
export function sessionCompleted(session: FakeCheckoutSession, opts: EventOptions & { paymentStatus?: string } = {}) {
  return event('checkout.session.completed', { ...session, status: 'complete', payment_status: opts.paymentStatus ?? 'paid' }, opts);
}

export function subscriptionEvent(
  type: 'customer.subscription.created' | 'customer.subscription.updated' | 'customer.subscription.deleted',
  s: {
    id: string;
    status: string;
    userId?: string;
    plan?: string;
    customer?: string;
    price?: string;
    cancelAtPeriodEnd?: boolean;
    periodStart?: number;
    periodEnd?: number;
  },
  opts: EventOptions = {},
) {
  const start = s.periodStart ?? Math.floor(Date.now() / 1000) - 86400;
  const end = s.periodEnd ?? start + 30 * 86400;
  const metadata: Record<string, string> = {};
  if (s.userId) metadata.userId = s.userId;
  if (s.plan) metadata.plan = s.plan;
  return event(
    type,
    {
      id: s.id,
      object: 'subscription',
      status: s.status,
      customer: s.customer ?? stripeId('cus'),
      cancel_at_period_end: s.cancelAtPeriodEnd ?? false,
      currency: 'gbp',
      metadata,
      items: {
        object: 'list',
        data: [
          {
            id: stripeId('si'),
            object: 'subscription_item',
            current_period_start: start,
            current_period_end: end,
            price: { id: s.price ?? 'price_unknown', object: 'price', currency: 'gbp' },
          },
        ],
      },
    },
    opts,
  );
}

/** Delivers an event to the platform's webhook route, signed (or mis-signed) as the options say. */
export async function deliverWebhook(
  body: unknown,
  opts: { secret?: string; timestamp?: number; tamper?: (raw: string) => string; signature?: string | null } = {},
) {
  const raw = JSON.stringify(body);
  const signature = opts.signature === undefined ? signPayload(raw, opts.secret, opts.timestamp) : opts.signature;
  const headers: Record<string, string> = signature === null ? {} : { 'stripe-signature': signature };
  return call('POST', '/api/webhooks/card', { rawBody: opts.tamper ? opts.tamper(raw) : raw, headers });
}
