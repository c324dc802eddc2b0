import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger } from '#domain/billing/credits';
import { getSubscription } from '#domain/billing/entitlements';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { onMetrics, type EmfDocument } from '#platform/metrics';
import { createUser, getUser } from '#data/users';
import { call } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, signPayload, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/fake-stripe';

const CARD_ENV = { CARD_WEBHOOK_SECRET: WEBHOOK_SECRET, CARD_PRICES: JSON.stringify({ solo: 'price_solo_m', network: 'price_network_m' }) };
const unsetCard = Object.fromEntries(Object.keys(CARD_ENV).map((k) => [k, undefined]));

beforeAll(() => {
  reloadConfig(CARD_ENV);
});
afterEach(() => {
  reloadConfig(CARD_ENV);
});
afterAll(() => {
  reloadConfig(unsetCard);
});

const newAccount = async () => (await createUser({ email: `${randomUUID()}@example.com` })).userId;
const subId = () => `sub_test_${randomUUID().slice(0, 12)}`;

describe('webhook signature (verified on the raw body with CARD_WEBHOOK_SECRET)', () => {
  it('accepts a correctly signed event', async () => {
    const userId = await newAccount();
    const res = await deliverWebhook(checkoutCompleted({ userId, plan: 'solo' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    expect((await getSubscription(userId))?.status).toBe('active');
  });

  it.each([
    ['a wrong secret', { secret: 'whsec_not_the_endpoint_secret_0123456789' }],
    ['a stale timestamp (10 minutes old)', { timestamp: Math.floor(Date.now() / 1000) - 600 }],
    ['a timestamp a year ahead (defect 11)', { timestamp: Math.floor(Date.now() / 1000) + 365 * 86400 }],
    ['a tampered body', { tamper: (raw: string) => raw.replace('"solo"', '"network"') }],
    ['no signature header', { signature: null }],
    ['a garbage signature header', { signature: 't=abc,v1=zz' }],
  ] as const)('refuses %s with 400 and changes nothing', async (_what, opts) => {
    const userId = await newAccount();
    const event = checkoutCompleted({ userId, plan: 'solo' });
    const res = await deliverWebhook(event, opts);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_SIGNATURE');
    expect(await getSubscription(userId)).toBeUndefined();
    expect(await getGlobal(keys.cardEvent(event.id))).toBeUndefined();
    expect((await getUser(userId))?.plan).toBeNull();
  });

  it('refuses a signed body that is not an event with 400', async () => {
    const raw = 'not json at all';
    const res = await call('POST', '/api/webhooks/card', { rawBody: raw, headers: { 'stripe-signature': signPayload(raw) } });
    expect(res.status).toBe(400);
  });

  it('answers 503 CARD_NOT_CONFIGURED when no webhook secret is configured', async () => {
    reloadConfig({ CARD_WEBHOOK_SECRET: undefined });
    const userId = await newAccount();
    const res = await deliverWebhook(checkoutCompleted({ userId }));
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CARD_NOT_CONFIGURED');
    expect(await getSubscription(userId)).toBeUndefined();
  });
});

describe('each event id takes effect once', () => {
  it('a replayed credit purchase adds the credits once', async () => {
    const userId = await newAccount();
    const sessionId = `cs_test_${randomUUID().slice(0, 12)}`;
    const event = checkoutCompleted({ userId, mode: 'payment', sessionId, metadata: { userId, kind: 'credits', credits: '500', price: 'price_500' } });
    const emitted: EmfDocument[] = [];
    const stopListening = onMetrics((emf) => emitted.push(emf));
    try {
      for (let i = 0; i < 3; i++) expect((await deliverWebhook(event)).status).toBe(200);
    } finally {
      stopListening();
    }
    // Payments as business metrics: the first delivery applied, the replays not.
    expect(emitted.map((emf) => [emf.PaymentEventsApplied ?? 0, emf.PaymentEventsNotApplied ?? 0])).toEqual([
      [1, 0],
      [0, 1],
      [0, 1],
    ]);
    expect((await getUser(userId, true))?.credits).toBe(500);
    const { entries } = await creditLedger(userId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ delta: 500, reason: 'purchase' });
    expect(entries[0]!.id).toContain(`purchase#${sessionId}`);
  });

  it('the same session reported under a second event id adds nothing more', async () => {
    const userId = await newAccount();
    const sessionId = `cs_test_${randomUUID().slice(0, 12)}`;
    const metadata = { userId, kind: 'credits', credits: '100', price: 'price_100' };
    const first = checkoutCompleted({ userId, mode: 'payment', sessionId, metadata });
    const second = { ...checkoutCompleted({ userId, mode: 'payment', sessionId, metadata }), type: 'checkout.session.async_payment_succeeded' };
    second.data.object.created = first.data.object.created;
    expect((await deliverWebhook(first)).status).toBe(200);
    expect((await deliverWebhook(second)).status).toBe(200);
    expect((await getUser(userId, true))?.credits).toBe(100);
  });

  it('parallel redeliveries of one event apply it once', async () => {
    const userId = await newAccount();
    const event = checkoutCompleted({ userId, mode: 'payment', metadata: { userId, kind: 'credits', credits: '250', price: 'p' } });
    const results = await Promise.all(Array.from({ length: 8 }, () => deliverWebhook(event)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await getUser(userId, true))?.credits).toBe(250);
  });

  it('an unpaid checkout grants nothing', async () => {
    const userId = await newAccount();
    const event = checkoutCompleted({ userId, mode: 'payment', paymentStatus: 'unpaid', metadata: { userId, kind: 'credits', credits: '250', price: 'p' } });
    expect((await deliverWebhook(event)).status).toBe(200);
    expect((await getUser(userId, true))?.credits).toBe(0);
  });
});

describe('out-of-order delivery: the newest state wins', () => {
  it('updated(created=200, canceled) then updated(created=100, active) stays canceled', async () => {
    const userId = await newAccount();
    const id = subId();
    const newer = subscriptionEvent('customer.subscription.updated', { id, status: 'canceled', userId, plan: 'solo' }, { created: 200 });
    const older = subscriptionEvent('customer.subscription.updated', { id, status: 'active', userId, plan: 'solo' }, { created: 100 });
    expect((await deliverWebhook(newer)).status).toBe(200);
    expect((await deliverWebhook(older)).status).toBe(200);
    const sub = await getSubscription(userId);
    expect(sub).toMatchObject({ status: 'canceled', eventCreated: 200, subscriptionId: id });
    // The stale event is still recorded as handled, so a redelivery is a no-op too.
    expect(await getGlobal(keys.cardEvent(older.id))).toMatchObject({ outcome: 'stale' });
  });

  it('in order, the later event applies', async () => {
    const userId = await newAccount();
    const id = subId();
    await deliverWebhook(subscriptionEvent('customer.subscription.created', { id, status: 'incomplete', userId, plan: 'network' }, { created: 100 }));
    expect((await getSubscription(userId))?.status).toBe('incomplete');
    await deliverWebhook(subscriptionEvent('customer.subscription.updated', { id, status: 'active', userId, plan: 'network' }, { created: 101 }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'active', plan: 'network' });
    expect((await getUser(userId))?.plan).toBe('network');
  });

  it('events of the same second settle the same way in either order (cancellation wins)', async () => {
    for (const order of [0, 1]) {
      const userId = await newAccount();
      const id = subId();
      const active = subscriptionEvent('customer.subscription.updated', { id, status: 'active', userId, plan: 'solo' }, { created: 500 });
      const deleted = subscriptionEvent('customer.subscription.deleted', { id, status: 'canceled', userId, plan: 'solo' }, { created: 500 });
      for (const e of order ? [active, deleted] : [deleted, active]) await deliverWebhook(e);
      expect((await getSubscription(userId))?.status).toBe('canceled');
    }
  });

  it('records the billing period and cancel-at-period-end from the subscription items', async () => {
    const userId = await newAccount();
    const start = 1_760_000_000;
    await deliverWebhook(
      subscriptionEvent('customer.subscription.updated', {
        id: subId(),
        status: 'active',
        userId,
        plan: 'solo',
        cancelAtPeriodEnd: true,
        periodStart: start,
        periodEnd: start + 86400,
      }),
    );
    expect(await getSubscription(userId)).toMatchObject({
      currentPeriodStart: new Date(start * 1000).toISOString(),
      currentPeriodEnd: new Date((start + 86400) * 1000).toISOString(),
      cancelAtPeriodEnd: true,
    });
  });
});

describe('cancel, then resubscribe', () => {
  it('a deleted subscription makes the account inactive; a new checkout makes it active again with the new subscription', async () => {
    const userId = await newAccount();
    const first = subId();
    const t = Math.floor(Date.now() / 1000);
    await deliverWebhook(checkoutCompleted({ userId, plan: 'solo', subscription: first }, { created: t - 300 }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'active', plan: 'solo', subscriptionId: first });

    await deliverWebhook(subscriptionEvent('customer.subscription.deleted', { id: first, status: 'canceled', userId, plan: 'solo' }, { created: t - 200 }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'canceled', subscriptionId: first });
    // The plan keeps its name; the status says it is not in force.
    expect((await getUser(userId))?.plan).toBe('solo');

    const second = subId();
    await deliverWebhook(checkoutCompleted({ userId, plan: 'network', subscription: second }, { created: t - 100 }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'active', plan: 'network', subscriptionId: second });
    expect((await getUser(userId))?.plan).toBe('network');

    // A late cancellation of the old subscription, even with a newer timestamp, does not end the new one.
    await deliverWebhook(subscriptionEvent('customer.subscription.updated', { id: first, status: 'canceled', userId, plan: 'solo' }, { created: t }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'active', plan: 'network', subscriptionId: second });
  });
});

describe('which account an event belongs to', () => {
  it('a subscription event without our metadata finds the account through the customer of its checkout, and the plan through its price', async () => {
    const userId = await newAccount();
    const customer = `cus_test_${randomUUID().slice(0, 10)}`;
    const id = subId();
    await deliverWebhook(checkoutCompleted({ userId, plan: 'solo', subscription: id, customer }, { created: 1000 }));
    await deliverWebhook(subscriptionEvent('customer.subscription.updated', { id, status: 'past_due', customer, price: 'price_network_m' }, { created: 1001 }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'past_due', plan: 'network', customerId: customer });
  });

  it('an event for an account that does not exist is acknowledged and changes nothing', async () => {
    const ghost = `u_${randomUUID().replaceAll('-', '')}`;
    const event = checkoutCompleted({ userId: ghost, plan: 'solo' });
    const res = await deliverWebhook(event);
    expect(res.status).toBe(200);
    expect(await getSubscription(ghost)).toBeUndefined();
    expect(await getGlobal(keys.cardEvent(event.id))).toMatchObject({ outcome: 'ignored' });
  });

  it('a checkout whose metadata names another user than client_reference_id is ignored', async () => {
    const userId = await newAccount();
    const other = await newAccount();
    await deliverWebhook(checkoutCompleted({ userId, metadata: { userId: other, plan: 'network', kind: 'subscription' } }));
    expect(await getSubscription(userId)).toBeUndefined();
    expect(await getSubscription(other)).toBeUndefined();
  });

  it('other event types are acknowledged and ignored', async () => {
    const res = await deliverWebhook({ ...subscriptionEvent('customer.subscription.updated', { id: subId(), status: 'active' }), type: 'invoice.created' });
    expect(res.status).toBe(200);
  });
});

describe('storage purchases', () => {
  it('a paid storage checkout adds its GB once', async () => {
    const userId = await newAccount();
    await deliverWebhook(checkoutCompleted({ userId, plan: 'solo' }));
    const event = checkoutCompleted({ userId, mode: 'payment', metadata: { userId, kind: 'storage', storageGb: '4' } });
    await deliverWebhook(event);
    await deliverWebhook(event);
    await deliverWebhook(checkoutCompleted({ userId, mode: 'payment', metadata: { userId, kind: 'storage', storageGb: '2' } }));
    expect(await getSubscription(userId)).toMatchObject({ status: 'active', extraStorageGb: 6 });
  });
});
