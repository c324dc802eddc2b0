import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gatewayCardPrice, tokenToCardMinor } from '#domain/payments/gateway-card';
import { reloadConfig } from '#platform/config';
import { gatewayReceiptHash } from '#data/gateway-receipts';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { accountSession, call } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { deliverWebhook, sessionCompleted, startFakeStripe, WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe';
import { useFakeModelProviders } from '../helpers/model-providers';
import { gateway } from './gateway-helpers';

/**
 * A gateway call prepaid by a one-off card checkout, without an account: the checkoutUrl of the 402
 * creates a payment-mode checkout at the call's card price, the processor's webhook stores the
 * single-use receipt, and `Authorization: Bearer gwr_…` spends it once.
 */
const models = useFakeModelProviders();
let stripe: FakeStripe;
let cardEnv: Record<string, string | undefined>;

beforeAll(async () => {
  stripe = await startFakeStripe();
  cardEnv = {
    ...stripe.env,
    CARD_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CARD_PRICES: JSON.stringify({ label: 'price_label_m', solo: 'price_solo_m' }),
    GATEWAY_PRICES: undefined,
    GATEWAY_CARD_PRICES: undefined,
    GATEWAY_CARD_RATE: undefined,
    MPP_RECIPIENT: undefined,
  };
});
beforeEach(() => {
  reloadConfig(cardEnv);
  stripe.requests.length = 0;
});
afterAll(async () => {
  reloadConfig(Object.fromEntries(Object.keys(cardEnv).map((k) => [k, undefined])));
  await stripe.close();
});

const lastCheckout = () => stripe.requests.filter((r) => r.path === '/v1/checkout/sessions').at(-1)!;
const asReceipt = (token: string) => ({ authorization: `Bearer ${token}` });
const requestsFor = (prompt: string) => models.model.requests.filter((r) => JSON.stringify(r.body.messages).includes(prompt));

/** Anonymous checkout for `plugin`; returns the receipt token of its success URL and the session the processor holds. */
async function checkout(plugin = 'generate-text') {
  const res = await call('GET', `/api/v1/payments/card/create?plugin=${plugin}`);
  expect(res.status).toBe(303);
  const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)/.exec(res.headers.location!)?.[1];
  const session = stripe.sessions.get(sessionId!)!;
  const token = new URLSearchParams(new URL(session.success_url!).hash.slice(1)).get('receipt')!;
  return { res, session, token };
}

/** Checkout, then the processor's webhook confirming it. */
async function paidReceipt(plugin = 'generate-text') {
  const bought = await checkout(plugin);
  const delivered = await deliverWebhook(sessionCompleted(bought.session));
  expect(delivered.status).toBe(200);
  return bought.token;
}

describe('card price of a gateway call', () => {
  it('converts the token price at GATEWAY_CARD_RATE, rounded up to a penny, at least 30p; GATEWAY_CARD_PRICES wins', () => {
    expect(tokenToCardMinor('0.01', '1')).toBe(1n);
    expect(tokenToCardMinor('0.000001', '1')).toBe(1n);
    expect(tokenToCardMinor('1.234561', '1')).toBe(124n);
    expect(tokenToCardMinor('1.5', '0.79')).toBe(119n);
    expect(tokenToCardMinor('2', '0.5')).toBe(100n);
    expect(gatewayCardPrice('generate-text')).toEqual({ minor: 30, currency: 'gbp', amount: 0.3 });
    reloadConfig({ ...cardEnv, GATEWAY_PRICES: '{"agent":"1.5"}', GATEWAY_CARD_RATE: '0.79', GATEWAY_CARD_PRICES: '{"tts":45}' });
    expect(gatewayCardPrice('agent')).toEqual({ minor: 119, currency: 'gbp', amount: 1.19 });
    expect(gatewayCardPrice('tts')).toEqual({ minor: 45, currency: 'gbp', amount: 0.45 });
  });

  it('refuses a configured card price under the minimum charge', () => {
    expect(() => reloadConfig({ ...cardEnv, GATEWAY_CARD_PRICES: '{"tts":29}' })).toThrow(/GATEWAY_CARD_PRICES/);
  });

  it('the 402 shows the card price', async () => {
    reloadConfig({ ...cardEnv, GATEWAY_PRICES: '{"agent":"1.5"}', GATEWAY_CARD_RATE: '0.79' });
    const res = await gateway({ plugin: 'agent' });
    expect(res.status).toBe(402);
    expect(res.body.card).toEqual({ checkoutUrl: '/api/v1/payments/card/create?plugin=agent', amount: 1.19, currency: 'gbp' });
  });
});

describe('GET /api/v1/payments/card/create without a session', () => {
  it('303s to a payment-mode checkout at the card price, carrying the receipt hash; the token comes back in the success URL fragment', async () => {
    reloadConfig({ ...cardEnv, GATEWAY_CARD_PRICES: '{"tts":45}' });
    const { res, session, token } = await checkout('tts');
    expect(res.headers.location).toBe(session.url);
    expect(lastCheckout().form).toMatchObject({
      mode: 'payment',
      currency: 'gbp',
      line_items: [{ price_data: { currency: 'gbp', unit_amount: '45' }, quantity: '1' }],
      metadata: { kind: 'gateway-call', plugin: 'tts', receipt: gatewayReceiptHash(token) },
    });
    expect(lastCheckout().form.client_reference_id).toBeUndefined();
    expect(token).toMatch(/^gwr_[A-Za-z0-9_-]{43}$/);
    expect(session.success_url).toBe(`http://127.0.0.1:3000/gateway/receipt?plugin=tts&checkout=success#receipt=${token}`);
    expect(session.cancel_url).toBe('http://127.0.0.1:3000/gateway/receipt?plugin=tts&checkout=cancelled');
    // The processor sees the hash only; the token is nowhere in what it stores but the return link.
    expect(JSON.stringify(session.metadata)).not.toContain(token);
  });

  it('a signed-in caller without a subscription still gets the subscription checkout', async () => {
    const session = await accountSession();
    const res = await call('GET', '/api/v1/payments/card/create?plugin=tts', { session });
    expect(res.status).toBe(303);
    expect(lastCheckout().form).toMatchObject({ mode: 'subscription', metadata: { plugin: 'tts', plan: 'label', userId: session.userId } });
    expect(lastCheckout().form.line_items).toEqual([{ price: 'price_label_m', quantity: '1' }]);
  });

  it('answers 503 CARD_NOT_CONFIGURED without a card processor', async () => {
    reloadConfig({ ...cardEnv, CARD_SECRET_KEY: undefined });
    const res = await call('GET', '/api/v1/payments/card/create?plugin=tts');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CARD_NOT_CONFIGURED');
  });
});

describe('the webhook stores a prepaid receipt', () => {
  it('once per session, bound to the plugin, with a 24 h TTL; a redelivery or a second event changes nothing', async () => {
    const { session, token } = await checkout('stt');
    const event = sessionCompleted(session);
    expect((await deliverWebhook(event)).status).toBe(200);
    const stored = await getGlobal<Record<string, unknown>>(keys.gatewayReceipt(gatewayReceiptHash(token)), true);
    expect(stored).toMatchObject({ plugin: 'stt', status: 'paid', sessionId: session.id, amountMinor: 30, currency: 'gbp' });
    const ttl = stored!.expiresAt as number;
    expect(ttl).toBeGreaterThan(Date.now() / 1000 + 24 * 3600 - 60);
    expect(ttl).toBeLessThan(Date.now() / 1000 + 26 * 3600);
    expect(await getGlobal(keys.cardEvent(event.id), true)).toMatchObject({ outcome: 'applied' });

    expect((await deliverWebhook(event)).status).toBe(200);
    const second = sessionCompleted(session);
    expect((await deliverWebhook(second)).status).toBe(200);
    expect(await getGlobal(keys.cardEvent(second.id), true)).toMatchObject({ outcome: 'duplicate' });
  });

  it('an unpaid session or one without a valid receipt hash stores nothing', async () => {
    const unpaid = await checkout();
    await deliverWebhook(sessionCompleted(unpaid.session, { paymentStatus: 'unpaid' }));
    expect(await getGlobal(keys.gatewayReceipt(gatewayReceiptHash(unpaid.token)), true)).toBeUndefined();
    const forged = await checkout();
    await deliverWebhook(sessionCompleted({ ...forged.session, metadata: { ...forged.session.metadata, plugin: 'nope' } }));
    expect(await getGlobal(keys.gatewayReceipt(gatewayReceiptHash(forged.token)), true)).toBeUndefined();
  });
});

describe('POST /api/v1/gateway with a card receipt', () => {
  it('serves once: 200 with payment {method: card, receipt: null}; the replay is 402 ALREADY_USED', async () => {
    const token = await paidReceipt();
    const prompt = `receipt ${randomUUID()}`;
    const res = await gateway({ prompt }, { headers: asReceipt(token) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ plugin: 'generate-text', message: fakeAnswerTo(prompt), payment: { method: 'card', receipt: null } });
    expect(res.headers['payment-receipt']).toBeUndefined();
    const replay = await gateway({ prompt }, { headers: asReceipt(token) });
    expect(replay.status).toBe(402);
    expect(replay.body).toMatchObject({ error: 'payment_required', code: 'ALREADY_USED' });
    expect(requestsFor(prompt)).toHaveLength(1);
  });

  it('20 parallel redemptions: exactly one 200 and one model call', async () => {
    const token = await paidReceipt();
    const prompt = `parallel receipt ${randomUUID()}`;
    const all = await Promise.all(Array.from({ length: 20 }, () => gateway({ prompt }, { headers: asReceipt(token) })));
    expect(all.filter((r) => r.status === 200)).toHaveLength(1);
    expect(all.filter((r) => r.status === 402 && r.body.code === 'ALREADY_USED')).toHaveLength(19);
    expect(requestsFor(prompt)).toHaveLength(1);
  });

  it('another plugin is 402 WRONG_PLUGIN and leaves the receipt for its own plugin', async () => {
    const token = await paidReceipt('generate-text');
    const wrong = await gateway({ plugin: 'tts' }, { headers: asReceipt(token) });
    expect(wrong.status).toBe(402);
    expect(wrong.body.code).toBe('WRONG_PLUGIN');
    expect((await gateway({ prompt: 'still mine' }, { headers: asReceipt(token) })).status).toBe(200);
  });

  it('a receipt not (yet) confirmed by the webhook, or never issued, is 402 UNKNOWN_RECEIPT', async () => {
    const { token } = await checkout();
    expect((await gateway({}, { headers: asReceipt(token) })).body.code).toBe('UNKNOWN_RECEIPT');
    const made = await gateway({}, { headers: asReceipt(`gwr_${'A'.repeat(43)}`) });
    expect(made.status).toBe(402);
    expect(made.body.code).toBe('UNKNOWN_RECEIPT');
  });

  it('a plugin failure after redemption keeps the receipt redeemable; the retry is served once', async () => {
    const token = await paidReceipt();
    const prompt = `receipt retry ${randomUUID()}`;
    models.model.failWith = 500;
    try {
      const failed = await gateway({ prompt }, { headers: asReceipt(token) });
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ error: 'internal', code: 'PROVIDER_ERROR' });
    } finally {
      models.model.failWith = undefined;
    }
    expect(await getGlobal(keys.gatewayReceipt(gatewayReceiptHash(token)), true)).toMatchObject({ status: 'paid' });
    const retried = await gateway({ prompt }, { headers: asReceipt(token) });
    expect(retried.status).toBe(200);
    expect(retried.body.message).toBe(fakeAnswerTo(prompt));
    expect((await gateway({ prompt }, { headers: asReceipt(token) })).body.code).toBe('ALREADY_USED');
  });

  it('a receipt token is no session elsewhere: a session route answers 401', async () => {
    const token = await paidReceipt();
    const res = await call('GET', '/api/billing', { headers: asReceipt(token) });
    expect(res.status).toBe(401);
  });
});
