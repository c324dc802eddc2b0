import { describe, expect, it } from 'vitest';
import { getAddress, type Hex } from 'viem';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { call, testSession, uniqueIp } from '../helpers/api';
import { refusedUrl } from '../helpers/fake-json-rpc';
import { Challenge } from 'mppx';
import { challenge, credentialOf, gateway, OTHER_TOKEN, PATH_USD, PRICE_UNITS, randomAddress, SPEC_CHALLENGE_PREFIX, useGatewayChain } from './gateway-helpers';

/** POST /api/v1/gateway and its preflight (spec 4.12): payment selection, the 402 challenge, MPP refusals, card. */
const bed = useGatewayChain();

/** A transfer bound to the challenge by its memo. */
const pay = (memo: Hex, amount = PRICE_UNITS, opts: { token?: Hex; to?: Hex } = {}) =>
  bed.chain.transferWithMemo(bed.payer, opts.token ?? PATH_USD, opts.to ?? bed.recipient, amount, memo);
const withCredential = (hash: Hex, nonce: string, plugin = 'generate-text') =>
  gateway({ plugin }, { headers: { authorization: `Payment ${credentialOf(hash, nonce)}` } });

function expectChallenge(res: Awaited<ReturnType<typeof gateway>>, code: string) {
  expect(res.status).toBe(402);
  expect(res.body).toMatchObject({ error: 'payment_required', code });
  expect(res.body.mpp.nonce).toEqual(expect.any(String));
  expect(res.headers['www-authenticate']!.startsWith(SPEC_CHALLENGE_PREFIX(res.body.mpp))).toBe(true);
  expect(res.body).toMatchObject({
    status: 402,
    detail: res.body.message,
    challengeId: res.body.mpp.nonce,
    type: expect.stringMatching(/^https:\/\/paymentauth\.org\/problems\//),
  });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['payment-receipt']).toBeUndefined();
}

describe('the 402 challenge', () => {
  it('has the spec body and header, and a fresh nonce stored with its binding and a TTL', async () => {
    const before = Date.now();
    const res = await gateway({ plugin: 'tts' });
    expectChallenge(res, 'PAYMENT_REQUIRED');
    expect(res.headers['cache-control']).toContain('no-store');
    expect(res.body).toEqual({
      error: 'payment_required',
      code: 'PAYMENT_REQUIRED',
      message: expect.any(String),
      type: 'https://paymentauth.org/problems/payment-required',
      title: 'Payment Required',
      status: 402,
      detail: res.body.message,
      challengeId: res.body.mpp.nonce,
      mpp: {
        scheme: 'tempo',
        amount: '0.02',
        currency: getAddress(PATH_USD),
        recipient: getAddress(bed.recipient),
        description: expect.stringContaining(res.body.mpp.nonce),
        nonce: expect.any(String),
        expiresAt: expect.any(Number),
        chainId: 4217,
        memo: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      // 0.02 token at the default rate is 2p, under the processor's 30p minimum.
      card: { checkoutUrl: '/api/v1/payments/card/create?plugin=tts', amount: 0.3, currency: 'gbp' },
    });
    expect(res.body.mpp.expiresAt).toBeGreaterThanOrEqual(before + 300_000);
    expect(res.body.mpp.expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);
    const stored = await getGlobal<Record<string, unknown>>(keys.mppChallenge(res.body.mpp.nonce), true);
    expect(stored).toMatchObject({
      plugin: 'tts',
      amount: '0.02',
      baseUnits: '20000',
      currency: PATH_USD,
      recipient: bed.recipient,
      chainId: 4217,
      status: 'open',
    });
    expect(stored!.expiresAt).toBeGreaterThan(Math.floor(res.body.mpp.expiresAt / 1000));

    const again = await gateway({ plugin: 'tts' });
    expect(again.body.mpp.nonce).not.toBe(res.body.mpp.nonce);
    expect(again.body.mpp.memo).not.toBe(res.body.mpp.memo);
  });

  it("the WWW-Authenticate challenge is the drafts': mppx parses it, and its request binds the price, chain, memo and push mode", async () => {
    const res = await gateway({ plugin: 'tts' });
    const parsed = Challenge.deserialize(res.headers['www-authenticate']!);
    expect(parsed).toEqual({
      id: res.body.mpp.nonce,
      realm: '127.0.0.1:3000',
      method: 'tempo',
      intent: 'charge',
      expires: new Date(res.body.mpp.expiresAt).toISOString(),
      request: {
        amount: '20000',
        currency: getAddress(PATH_USD),
        recipient: getAddress(bed.recipient),
        methodDetails: { chainId: 4217, memo: res.body.mpp.memo, supportedModes: ['push'] },
      },
    });
    const request = /request="([^"]+)"/.exec(res.headers['www-authenticate']!)![1]!;
    expect(request).toMatch(/^[A-Za-z0-9_-]+$/);
    // JCS: keys sorted, no whitespace.
    expect(Buffer.from(request, 'base64url').toString()).toBe(
      `{"amount":"20000","currency":"${getAddress(PATH_USD)}","methodDetails":{"chainId":4217,"memo":"${res.body.mpp.memo}","supportedModes":["push"]},"recipient":"${getAddress(bed.recipient)}"}`,
    );

    reloadConfig({ ...bed.settings, MPP_REALM: 'pay.example.com' });
    expect(Challenge.deserialize((await gateway({})).headers['www-authenticate']!).realm).toBe('pay.example.com');
  });

  it('prices from GATEWAY_PRICES', async () => {
    reloadConfig({ ...bed.settings, GATEWAY_PRICES: '{"agent":"1.5"}' });
    const res = await gateway({ plugin: 'agent' });
    expect(res.body.mpp.amount).toBe('1.5');
    expect(res.body.card.amount).toBe(1.5);
    expect(await getGlobal(keys.mppChallenge(res.body.mpp.nonce), true)).toMatchObject({ baseUnits: '1500000' });
  });

  it('without MPP_RECIPIENT: the same shape says machine payments are unavailable, and a credential gets MPP_NOT_CONFIGURED', async () => {
    reloadConfig({ ...bed.settings, MPP_RECIPIENT: undefined });
    const res = await gateway({});
    expect(res.status).toBe(402);
    expect(res.body.mpp).toMatchObject({
      scheme: 'tempo',
      amount: '0.01',
      recipient: null,
      nonce: null,
      expiresAt: null,
      memo: null,
      description: expect.stringMatching(/not available/),
    });
    expect(res.body.challengeId).toBeNull();
    expect(res.body.card.checkoutUrl).toBe('/api/v1/payments/card/create?plugin=generate-text');
    expect(res.headers['www-authenticate']).toBeUndefined();
    const refused = await gateway({}, { headers: { authorization: `Payment ${credentialOf(`0x${'11'.repeat(32)}`, 'n')}` } });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('MPP_NOT_CONFIGURED');
  });
});

describe('request checks', () => {
  it('refuses a body that is not application/json with 400', async () => {
    const res = await gateway({}, { headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNSUPPORTED_CONTENT_TYPE');
  });

  it('answers 502 no_plugin for an unknown plugin, from the body or the header; the header wins', async () => {
    expect((await gateway({ plugin: 'nope' })).body).toMatchObject({ error: 'no_plugin' });
    expect((await gateway({ plugin: 'nope' })).status).toBe(502);
    expect((await gateway({ plugin: 'tts' }, { headers: { 'x-plugin-id': 'nope' } })).status).toBe(502);
    const res = await gateway({ plugin: 'nope' }, { headers: { 'x-plugin-id': 'stt' } });
    expect(res.status).toBe(402);
    expect(res.body.card.checkoutUrl).toBe('/api/v1/payments/card/create?plugin=stt');
  });

  it('refuses an unknown X-Payment-Method with 400', async () => {
    expect((await gateway({}, { headers: { 'x-payment-method': 'cash' } })).status).toBe(400);
  });

  it('limits each caller to 100 requests per minute', async () => {
    const ip = uniqueIp();
    // The spec's 100, in a window no test run can straddle.
    reloadConfig({ ...bed.settings, MPP_RECIPIENT: undefined, RATE_LIMITS: '{"gateway":{"windowSeconds":3600}}' });
    const statuses = [];
    for (let i = 0; i < 101; i += 1) statuses.push((await call('POST', '/api/v1/gateway', { body: { prompt: 'hi' }, ip })).status);
    expect(statuses.filter((s) => s === 402)).toHaveLength(100);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('preflight and CORS', () => {
  it('answers the preflight for an allowed origin', async () => {
    reloadConfig({ ...bed.settings, GATEWAY_ALLOWED_ORIGINS: 'https://app.example.com' });
    const res = await call('OPTIONS', '/api/v1/gateway', { headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'Authorization, Content-Type, X-Plugin-Id, X-Payment-Method',
      'access-control-expose-headers': 'Payment-Receipt, WWW-Authenticate, x-plugin-id',
    });
    const post = await gateway({}, { headers: { origin: 'https://app.example.com' } });
    expect(post.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(post.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
  });

  it('errors the pipeline raises before the handler (401, 400, 429) carry the CORS headers too', async () => {
    reloadConfig({ ...bed.settings, GATEWAY_ALLOWED_ORIGINS: 'https://app.example.com', RATE_LIMITS: '{"gateway":{"limit":1,"windowSeconds":3600}}' });
    const origin = { origin: 'https://app.example.com' };
    const readable = (res: Awaited<ReturnType<typeof call>>) => {
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(res.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
    };
    const badToken = await call('POST', '/api/v1/gateway', { body: {}, bearer: 'not-a-token', headers: origin, ip: uniqueIp() });
    expect(badToken.status).toBe(401);
    readable(badToken);
    const notJson = await call('POST', '/api/v1/gateway', { rawBody: 'prompt=hi', headers: { ...origin, 'content-type': 'text/plain' }, ip: uniqueIp() });
    expect(notJson.status).toBe(400);
    readable(notJson);
    const brokenJson = await call('POST', '/api/v1/gateway', {
      rawBody: '{"prompt":',
      headers: { ...origin, 'content-type': 'application/json' },
      ip: uniqueIp(),
    });
    expect(brokenJson.status).toBe(400);
    readable(brokenJson);
    const ip = uniqueIp();
    await call('POST', '/api/v1/gateway', { body: { prompt: 'hi' }, headers: origin, ip });
    const limited = await call('POST', '/api/v1/gateway', { body: { prompt: 'hi' }, headers: origin, ip });
    expect(limited.status).toBe(429);
    readable(limited);
    const elsewhere = await call('POST', '/api/v1/gateway', { body: {}, bearer: 'not-a-token', headers: { origin: 'https://evil.example' }, ip: uniqueIp() });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('names no other origin', async () => {
    reloadConfig({ ...bed.settings, GATEWAY_ALLOWED_ORIGINS: 'https://app.example.com' });
    const res = await call('OPTIONS', '/api/v1/gateway', { headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('MPP credentials that are refused get 402, a fresh challenge and the reason', () => {
  it.each([
    ['wrong recipient', 'WRONG_RECIPIENT', (memo: Hex) => pay(memo, PRICE_UNITS, { to: randomAddress() })],
    ['wrong token', 'WRONG_TOKEN', (memo: Hex) => pay(memo, PRICE_UNITS, { token: OTHER_TOKEN })],
    ['one base unit short', 'AMOUNT_TOO_LOW', (memo: Hex) => pay(memo, PRICE_UNITS - 1n)],
    ['a reverted transfer (more than the balance)', 'TX_REVERTED', (memo: Hex) => pay(memo, 10n ** 30n)],
  ])('%s → %s', async (_what, code, payment) => {
    const { nonce, memo } = await challenge();
    const res = await withCredential(await payment(memo), nonce);
    expectChallenge(res, code);
    expect(res.body.mpp.nonce).not.toBe(nonce);
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
  });

  it('an unknown transaction hash → TX_NOT_FOUND', async () => {
    const { nonce } = await challenge();
    expectChallenge(await withCredential(`0x${'12'.repeat(32)}`, nonce), 'TX_NOT_FOUND');
  });

  it('a challenge bound to another chain → WRONG_CHAIN', async () => {
    reloadConfig({ ...bed.settings, MPP_CHAIN_ID: '42431' });
    const { nonce, memo } = await challenge();
    expectChallenge(await withCredential(await pay(memo), nonce), 'WRONG_CHAIN');
  });

  it('too few confirmations → NOT_CONFIRMED, then accepted once the blocks are there (plugin reached)', async () => {
    reloadConfig({ ...bed.settings, MPP_CONFIRMATIONS: '3' });
    const { nonce, memo } = await challenge();
    const hash = await pay(memo);
    expectChallenge(await withCredential(hash, nonce), 'NOT_CONFIRMED');
    bed.chain.mine(2);
    const res = await withCredential(hash, nonce);
    expect(res.status).not.toBe(402);
    expect(await getGlobal(keys.txHash(hash), true)).toBeDefined();
  });

  it("an unknown nonce → UNKNOWN_NONCE; an expired one → EXPIRED; another plugin's → WRONG_PLUGIN", async () => {
    expectChallenge(await withCredential(await pay((await challenge()).memo), 'never-issued'), 'UNKNOWN_NONCE');

    reloadConfig({ ...bed.settings, MPP_CHALLENGE_TTL_SECONDS: '1' });
    const expiring = await challenge();
    const hash = await pay(expiring.memo);
    await new Promise((r) => setTimeout(r, Math.max(0, expiring.expiresAt - Date.now() + 5)));
    expectChallenge(await withCredential(hash, expiring.nonce), 'EXPIRED');

    reloadConfig(bed.settings);
    const forTts = await challenge('tts');
    expectChallenge(await withCredential(hash, forTts.nonce, 'generate-text'), 'WRONG_PLUGIN');
  });

  it('a malformed credential → MALFORMED_CREDENTIAL', async () => {
    const res = await gateway({}, { headers: { authorization: 'Payment not-json!' } });
    expectChallenge(res, 'MALFORMED_CREDENTIAL');
  });

  it('with the chain RPC down → 503 within seconds, and the credential is still redeemable afterwards', async () => {
    const { nonce, memo } = await challenge();
    const hash = await pay(memo);
    reloadConfig({ ...bed.settings, MPP_RPC_URL: await refusedUrl(), MPP_RPC_TIMEOUT_MS: '1000' });
    let started = Date.now();
    const refused = await withCredential(hash, nonce);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('CHAIN_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(3000);

    reloadConfig({ ...bed.settings, MPP_RPC_TIMEOUT_MS: '1000' });
    bed.chain.mode = 'hang';
    started = Date.now();
    const hung = await withCredential(hash, nonce);
    expect(hung.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await getGlobal(keys.mppChallenge(nonce), true)).toMatchObject({ status: 'open' });
    expect(await getGlobal(keys.txHash(hash), true)).toBeUndefined();

    bed.chain.mode = 'ok';
    const redeemed = await withCredential(hash, nonce);
    expect(redeemed.status).not.toBe(402);
    expect(await getGlobal(keys.txHash(hash), true)).toMatchObject({ nonce });
  });
});

describe('card payment', () => {
  it('without a session → 402; with a session but no subscription → 402 SUBSCRIPTION_REQUIRED', async () => {
    expectChallenge(await gateway({}), 'PAYMENT_REQUIRED');
    const session = await testSession();
    expectChallenge(await gateway({}, { bearer: session.token }), 'SUBSCRIPTION_REQUIRED');
    expectChallenge(await gateway({}, { session }), 'SUBSCRIPTION_REQUIRED');
  });

  it('forged or tampered session claims → 401, never a plugin call', async () => {
    const session = await testSession();
    const [h, p, s] = session.token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, email: 'admin@example.com', role: 'admin' })).toString('base64url'), s].join('.');
    const res = await gateway({}, { bearer: forged });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('TOKEN_INVALID');
    const none = [Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url'), p, ''].join('.');
    expect((await gateway({}, { bearer: none })).status).toBe(401);
  });

  it('headers never grant a subscription', async () => {
    const session = await testSession();
    const res = await gateway(
      {},
      { bearer: session.token, headers: { 'x-user-plan': 'network', 'x-card-subscription-id': 'sub_fake', 'x-user-email': 'admin@example.com' } },
    );
    expectChallenge(res, 'SUBSCRIPTION_REQUIRED');
  });
});
