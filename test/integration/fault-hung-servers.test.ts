import { randomUUID } from 'node:crypto';
import { serializeErc6492Signature } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { readOutbox, resetEmailClient } from '#adapters/email';
import { OUTSIDE_CALL_MARGIN_MS } from '#platform/deadline';
import { createUser } from '#data/users';
import { call, testSession, uniqueIp, type CallResult } from '../helpers/api';
import { startHungServer } from '../helpers/hung-server';
import { useFakeModelProviders } from '../helpers/model-providers';
import { subscribe } from './agents-helpers';

/**
 * Outside calls end inside the request's deadline. Each outside server here
 * accepts the connection and never answers; the services' own timeouts are set far above the
 * deadline, so only the deadline can bound them, and each route answers in time with its own code.
 */
const DEADLINE_MS = 4000;
/** The outside call's share of the deadline; the rest is the request's own table reads and writes. */
const OUTSIDE_BUDGET_MS = DEADLINE_MS - OUTSIDE_CALL_MARGIN_MS;
const LONG_OUTSIDE_TIMEOUTS = {
  MODEL_API_TIMEOUT_MS: '60000',
  CHAIN_RPC_TIMEOUT_MS: '60000',
  CARD_TIMEOUT_MS: '60000',
  WALLET_RPC_TIMEOUT_MS: '60000',
  MPP_RPC_TIMEOUT_MS: '60000',
};
const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

const bed = useFakeModelProviders();
/** One hung server per test, so no test reuses a connection another one opened. */
let hung: Awaited<ReturnType<typeof startHungServer>>;
const figures: Record<string, number> = {};

beforeAll(async () => {
  bed.apply({ REQUEST_DEADLINE_MS: String(DEADLINE_MS), ...LONG_OUTSIDE_TIMEOUTS });
  // Loads each group's handler first, so the timings below are the requests' own, not module loading.
  const warm = await testSession();
  await Promise.all([
    call('GET', '/api/ai/models'),
    call('GET', `/api/auth/token-gating/verify?address=${privateKeyToAccount(generatePrivateKey()).address}`, { ip: uniqueIp() }),
    call('GET', '/api/billing', { session: warm }),
    call('POST', '/api/auth/forgot-password', { body: { email: `${randomUUID()}@example.com` }, ip: uniqueIp() }),
    call('GET', '/api/wallet', { session: warm }),
    call('POST', '/api/v1/gateway', { body: { prompt: 'warm' }, ip: uniqueIp() }),
  ]);
});
beforeEach(async () => {
  hung = await startHungServer();
});
afterEach(async () => {
  await hung.close();
});

afterAll(async () => {
  console.info(`answers under hung outside servers (ms, deadline ${DEADLINE_MS}):`, figures);
  bed.apply({
    REQUEST_DEADLINE_MS: undefined,
    MODEL_API_TIMEOUT_MS: undefined,
    CHAIN_RPC_TIMEOUT_MS: undefined,
    CARD_TIMEOUT_MS: undefined,
    WALLET_RPC_TIMEOUT_MS: undefined,
    MPP_RPC_TIMEOUT_MS: undefined,
    WALLET_RPC_URL: undefined,
    CHAIN_RPC_URL: undefined,
    MPP_RPC_URL: undefined,
    MPP_RECIPIENT: undefined,
    GATING_TOKEN_ADDRESS: undefined,
    GATING_RPC_URL: undefined,
    CARD_SECRET_KEY: undefined,
    CARD_API_HOST: undefined,
    CARD_API_PORT: undefined,
    CARD_API_PROTOCOL: undefined,
    CARD_PRICES: undefined,
    SES_ENDPOINT: undefined,
  });
  resetEmailClient();
});

/** Runs one request against the hung server: it must have called out, waited for its budget and answered before the deadline. */
async function heldWithinBudget(name: string, run: () => Promise<CallResult>): Promise<CallResult> {
  const before = hung.connections();
  const started = Date.now();
  const res = await run();
  const ms = Date.now() - started;
  figures[name] = ms;
  expect(hung.connections(), `${name} called the hung server`).toBeGreaterThan(before);
  // Held until the outside call's budget ran out, and answered before the deadline.
  expect(ms, name).toBeGreaterThanOrEqual(OUTSIDE_BUDGET_MS - 1500);
  expect(ms, name).toBeLessThan(DEADLINE_MS);
  return res;
}

/** As heldWithinBudget, answered with `status`/`code`. */
async function answersInTime(name: string, status: number, code: string, run: () => Promise<CallResult>) {
  const res = await heldWithinBudget(name, run);
  expect([res.status, res.body?.code], name).toEqual([status, code]);
  expect(typeof res.body.error).toBe('string');
}

describe('hung outside servers answer within the deadline with their codes', () => {
  it('model provider: chat answers 500 PROVIDER_TIMEOUT, not a bare internal error', async () => {
    const session = await testSession();
    await subscribe(session.userId, 'solo');
    bed.apply({ MODEL_API_BASE_URL: hung.url, ANTHROPIC_BASE_URL: hung.url });
    try {
      await answersInTime('model chat', 500, 'PROVIDER_TIMEOUT', () =>
        call('POST', '/api/ai/chat', { session, body: { messages: [{ role: 'user', content: 'hello' }] } }),
      );
    } finally {
      bed.apply({ MODEL_API_BASE_URL: bed.model.baseUrl, ANTHROPIC_BASE_URL: bed.model.baseUrl });
    }
  });

  it('chain RPC: token gating answers 503 CHAIN_UNAVAILABLE, both the check and the status read', async () => {
    bed.apply({ GATING_TOKEN_ADDRESS: privateKeyToAccount(generatePrivateKey()).address, GATING_RPC_URL: hung.url });
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await answersInTime('token gating POST', 503, 'CHAIN_UNAVAILABLE', () =>
      call('POST', '/api/auth/token-gating/verify', { body: { fid: '1', address }, ip: uniqueIp() }),
    );
    await answersInTime('token gating GET', 503, 'CHAIN_UNAVAILABLE', () =>
      call('GET', `/api/auth/token-gating/verify?address=${address}`, { ip: uniqueIp() }),
    );
  });

  it('card processor: plan checkout, as an action and as a redirect, answers 502 CARD_PROCESSOR_ERROR', async () => {
    bed.apply({
      CARD_SECRET_KEY: 'sk_test_hung',
      CARD_API_HOST: '127.0.0.1',
      CARD_API_PORT: String(hung.port),
      CARD_API_PROTOCOL: 'http',
      CARD_PRICES: JSON.stringify({ solo: 'price_solo_m' }),
    });
    const user = await createUser({ email: `${randomUUID()}@example.com` });
    const session = await testSession({ userId: user.userId, email: user.email });
    await answersInTime('card checkout', 502, 'CARD_PROCESSOR_ERROR', () =>
      call('POST', '/api/billing', { session, body: { action: 'create-checkout', plan: 'solo' } }),
    );
    await answersInTime('card checkout redirect', 502, 'CARD_PROCESSOR_ERROR', () => call('GET', '/api/card/checkout?plan=solo', { session }));
  });

  it('email: forgot-password under a hung SES answers as for an unknown email, inside the deadline', async () => {
    const user = await createUser({ email: `${randomUUID()}@example.com` });
    const unknown = await call('POST', '/api/auth/forgot-password', { body: { email: `${randomUUID()}@example.com` }, ip: uniqueIp() });
    bed.apply({ SES_ENDPOINT: hung.url });
    resetEmailClient();
    try {
      const known = await heldWithinBudget('forgot-password (SES)', () =>
        call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() }),
      );
      // The send failing is logged, not answered: the answer must not tell a known email from an unknown one.
      expect([known.status, known.body]).toEqual([unknown.status, unknown.body]);
      expect(known.status).toBe(200);
      expect(await readOutbox(user.email)).toEqual([]);
    } finally {
      bed.apply({ SES_ENDPOINT: undefined });
      resetEmailClient();
    }
  });

  it('chain RPC: the wallet balance reads "unavailable" (200), inside the deadline', async () => {
    const session = await testSession();
    expect((await call('POST', '/api/wallet', { session, body: { action: 'create' } })).status).toBe(200);
    bed.apply({ WALLET_RPC_URL: hung.url });
    const res = await heldWithinBudget('wallet balance', () => call('GET', '/api/wallet', { session }));
    expect([res.status, res.body.hasWallet, res.body.balance]).toEqual([200, true, 'unavailable']);
  });

  it('chain RPC: a smart-wallet (ERC-6492/1271) sign-in answers 503 CHAIN_UNAVAILABLE', async () => {
    bed.apply({ CHAIN_RPC_URL: hung.url });
    const { nonce } = (await call('GET', '/api/auth/nonce', { ip: uniqueIp() })).body;
    const message = createSiweMessage({
      address: newAddress(),
      chainId: 8453,
      domain: '127.0.0.1:3000',
      uri: 'http://127.0.0.1:3000/signin',
      version: '1',
      nonce,
      issuedAt: new Date(),
    });
    // A wallet not yet deployed: only the chain can say whether the owner's signature counts for it.
    const signature = serializeErc6492Signature({
      address: newAddress(),
      data: '0xdeadbeef',
      signature: await privateKeyToAccount(generatePrivateKey()).signMessage({ message }),
    });
    await answersInTime('SIWE smart wallet', 503, 'CHAIN_UNAVAILABLE', () =>
      call('POST', '/api/auth/callback/wallet', { body: { message, signature }, ip: uniqueIp() }),
    );
  });

  it('chain RPC: an MPP payment to the v1 gateway answers 503 CHAIN_UNAVAILABLE', async () => {
    bed.apply({ MPP_RPC_URL: hung.url, MPP_RECIPIENT: newAddress() });
    const offered = await call('POST', '/api/v1/gateway', { body: { prompt: 'hello' }, ip: uniqueIp() });
    expect(offered.status).toBe(402);
    const credential = JSON.stringify({ scheme: 'tempo', transaction: `0x${'ab'.repeat(32)}`, challengeNonce: offered.body.mpp.nonce });
    await answersInTime('MPP gateway payment', 503, 'CHAIN_UNAVAILABLE', () =>
      call('POST', '/api/v1/gateway', { body: { prompt: 'hello' }, headers: { authorization: `Payment ${credential}` }, ip: uniqueIp() }),
    );
  });
});
