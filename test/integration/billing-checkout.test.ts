import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { createUser } from '#data/users';
import { call, testSession, type TestSession } from '../helpers/api';
import { checkoutCompleted, deliverWebhook, startFakeStripe, WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe';

let stripe: FakeStripe;
let cardEnv: Record<string, string>;
const PRICES = { label: 'price_label_m', solo: 'price_solo_m', collective: 'price_collective_m', network: 'price_network_m' };

beforeAll(async () => {
  stripe = await startFakeStripe();
  cardEnv = {
    ...stripe.env,
    CARD_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CARD_PRICES: JSON.stringify(PRICES),
    CARD_CREDIT_PRICES: JSON.stringify({ price_credits_1000: 1000, price_credits_5000: 5000 }),
    CARD_STORAGE_PRICE: 'price_storage_gb',
  };
});
beforeEach(() => {
  reloadConfig(cardEnv);
  stripe.requests.length = 0;
});
afterEach(() => {
  reloadConfig(cardEnv);
});
afterAll(async () => {
  reloadConfig(Object.fromEntries(Object.keys(cardEnv).map((k) => [k, undefined])));
  await stripe.close();
});

async function account(): Promise<TestSession> {
  const user = await createUser({ email: `${randomUUID()}@example.com` });
  return testSession({ userId: user.userId, email: user.email });
}

async function subscribe(session: TestSession, plan = 'solo', customer?: string) {
  const res = await deliverWebhook(checkoutCompleted({ userId: session.userId, plan, customer }));
  expect(res.status).toBe(200);
}

const lastSession = () => stripe.requests.at(-1)!;

describe('GET /api/card/checkout?plan=', () => {
  it('302s to the checkout session the SDK created, priced in GBP, carrying the user and the plan', async () => {
    const session = await account();
    const res = await call('GET', '/api/card/checkout?plan=collective', { session });
    expect(res.status).toBe(302);
    const sent = lastSession();
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/checkout/sessions');
    expect(sent.headers.authorization).toBe(`Bearer ${stripe.secretKey}`);
    expect(sent.form).toMatchObject({
      mode: 'subscription',
      currency: 'gbp',
      client_reference_id: session.userId,
      customer_email: session.email,
      metadata: { userId: session.userId, plan: 'collective', kind: 'subscription' },
      subscription_data: { metadata: { userId: session.userId, plan: 'collective' } },
      line_items: [{ price: PRICES.collective, quantity: '1' }],
    });
    expect(sent.form.success_url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/settings\/billing\?checkout=success/);
    expect(sent.form.cancel_url).toBe('http://127.0.0.1:3000/settings/billing?checkout=cancelled');
    expect(res.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
  });

  it('answers 400 for an unknown plan without calling the processor', async () => {
    const res = await call('GET', '/api/card/checkout?plan=platinum', { session: await account() });
    expect(res.status).toBe(400);
    expect(stripe.requests).toHaveLength(0);
  });

  it('answers 402 PLAN_REQUIRED for the retired free plan', async () => {
    const res = await call('GET', '/api/card/checkout?plan=free', { session: await account() });
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('PLAN_REQUIRED');
    expect(stripe.requests).toHaveLength(0);
  });

  it('answers 409 ALREADY_SUBSCRIBED while a subscription is active (no second subscription billed)', async () => {
    const session = await account();
    await subscribe(session, 'solo');
    const res = await call('GET', '/api/card/checkout?plan=network', { session });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'ALREADY_SUBSCRIBED', plan: 'solo' });
    expect(stripe.requests).toHaveLength(0);
  });

  it('reuses the processor customer of an earlier checkout', async () => {
    const session = await account();
    const customer = `cus_test_${randomUUID().slice(0, 10)}`;
    await subscribe(session, 'solo', customer);
    const res = await call('GET', '/api/card/credits?price=price_credits_1000', { session });
    expect(res.status).toBe(302);
    expect(lastSession().form.customer).toBe(customer);
    expect(lastSession().form.customer_email).toBeUndefined();
  });

  it('answers 503 CARD_NOT_CONFIGURED without a secret key, and for a plan without a price', async () => {
    reloadConfig({ CARD_SECRET_KEY: undefined });
    const session = await account();
    let res = await call('GET', '/api/card/checkout?plan=solo', { session });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CARD_NOT_CONFIGURED');

    reloadConfig({ ...cardEnv, CARD_PRICES: JSON.stringify({ solo: PRICES.solo }) });
    res = await call('GET', '/api/card/checkout?plan=network', { session });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CARD_NOT_CONFIGURED');
    expect(stripe.requests).toHaveLength(0);
  });

  it('answers 502 CARD_PROCESSOR_ERROR when the processor fails', async () => {
    stripe.failNext(500);
    const res = await call('GET', '/api/card/checkout?plan=solo', { session: await account() });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('CARD_PROCESSOR_ERROR');
    expect(res.text).not.toContain('simulated');
  });

  it('answers 502 when the configured secret key is refused by the processor', async () => {
    reloadConfig({ CARD_SECRET_KEY: 'sk_test_wrong' });
    const res = await call('GET', '/api/card/checkout?plan=solo', { session: await account() });
    expect(res.status).toBe(502);
  });
});

describe('GET /api/card/credits?price=', () => {
  it('302s to a one-off GBP checkout for a configured credit pack', async () => {
    const session = await account();
    const res = await call('GET', '/api/card/credits?price=price_credits_5000', { session });
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(lastSession().form).toMatchObject({
      mode: 'payment',
      currency: 'gbp',
      client_reference_id: session.userId,
      line_items: [{ price: 'price_credits_5000', quantity: '1' }],
      metadata: { userId: session.userId, kind: 'credits', credits: '5000', price: 'price_credits_5000' },
    });
  });

  it.each(['price_made_up', '__proto__', 'constructor'])('refuses %s, which is not a configured pack, with 400 UNKNOWN_PRICE', async (price) => {
    const res = await call('GET', `/api/card/credits?price=${price}`, { session: await account() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNKNOWN_PRICE');
    expect(stripe.requests).toHaveLength(0);
  });
});

describe('POST /api/card/storage-upgrade', () => {
  it('needs an active subscription: 402 SUBSCRIPTION_REQUIRED', async () => {
    const res = await call('POST', '/api/card/storage-upgrade', { session: await account(), body: { storageGb: 4 } });
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('SUBSCRIPTION_REQUIRED');
  });

  it('answers the checkout of storageGb GB for a subscriber', async () => {
    const session = await account();
    await subscribe(session);
    const res = await call('POST', '/api/card/storage-upgrade', { session, body: { storageGb: 4 } });
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(res.body.sessionId).toMatch(/^cs_test_/);
    expect(lastSession().form).toMatchObject({
      mode: 'payment',
      line_items: [{ price: 'price_storage_gb', quantity: '4' }],
      metadata: { userId: session.userId, kind: 'storage', storageGb: '4' },
    });
  });

  it('refuses more than the maximum with 400', async () => {
    const res = await call('POST', '/api/card/storage-upgrade', { session: await account(), body: { storageGb: 65 } });
    expect(res.status).toBe(400);
  });
});

describe('GET /api/v1/payments/card/create?plugin=', () => {
  it('303s a caller without a subscription to a subscription checkout naming the plugin', async () => {
    const session = await account();
    const res = await call('GET', '/api/v1/payments/card/create?plugin=tts', { session });
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(lastSession().form).toMatchObject({ mode: 'subscription', currency: 'gbp', metadata: { plugin: 'tts', plan: 'label', userId: session.userId } });
  });

  it('sends a subscriber straight back to the app', async () => {
    const session = await account();
    await subscribe(session);
    const res = await call('GET', '/api/v1/payments/card/create?plugin=agent', { session });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('http://127.0.0.1:3000/settings/billing?plugin=agent');
    expect(stripe.requests).toHaveLength(0);
  });

  it('303s a caller without a session to a one-off payment checkout for one call (the plan does not apply)', async () => {
    const res = await call('GET', '/api/v1/payments/card/create?plugin=generate-text&plan=solo');
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(lastSession().form).toMatchObject({ mode: 'payment', metadata: { kind: 'gateway-call', plugin: 'generate-text' } });
    expect(lastSession().form.line_items).toEqual([{ price_data: expect.objectContaining({ currency: 'gbp', unit_amount: '30' }), quantity: '1' }]);
  });

  it('answers 400 for an unknown plugin, with or without a session', async () => {
    expect((await call('GET', '/api/v1/payments/card/create?plugin=nope')).status).toBe(400);
    const res = await call('GET', '/api/v1/payments/card/create?plugin=nope', { session: await account() });
    expect(res.status).toBe(400);
  });
});

describe('POST /api/billing checkout actions', () => {
  it('create-checkout answers {url, sessionId}', async () => {
    const session = await account();
    const res = await call('POST', '/api/billing', { session, body: { action: 'create-checkout', plan: 'label' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//), sessionId: expect.stringMatching(/^cs_test_/) });
    expect(lastSession().form).toMatchObject({ metadata: { plan: 'label' }, line_items: [{ price: PRICES.label }] });
  });

  it('create-checkout with the free plan answers 402 PLAN_REQUIRED', async () => {
    const res = await call('POST', '/api/billing', { session: await account(), body: { action: 'create-checkout', plan: 'free' } });
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('PLAN_REQUIRED');
  });

  it('buy-credits answers the checkout and the credits of the pack', async () => {
    const res = await call('POST', '/api/billing', { session: await account(), body: { action: 'buy-credits', price: 'price_credits_1000' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ credits: 1000, sessionId: expect.stringMatching(/^cs_test_/) });
  });

  it('refuses a smuggled amount or plan field', async () => {
    const res = await call('POST', '/api/billing', {
      session: await account(),
      body: { action: 'buy-credits', price: 'price_credits_1000', credits: 1_000_000 },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('legacy /api/checkout', () => {
  it.each(['GET', 'POST'])('%s answers 410 Gone naming the replacement', async (method) => {
    const res = await call(method, '/api/checkout', { rawBody: method === 'POST' ? '{"plan":"solo"}' : undefined });
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ code: 'GONE', use: '/api/card/checkout' });
  });
});
