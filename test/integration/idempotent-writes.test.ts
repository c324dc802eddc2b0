import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { createUser } from '#data/users';
import { tenant } from '#data/tenant';
import { accountSession, call, testSession, uniqueIp, type CallOptions, type TestSession } from '../helpers/api';
import { startFakeStripe, WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe';
import { drain, runningAgent, useAgentsTestBed } from './agents-helpers';

/**
 * The writes a client may retry after a timeout accept an Idempotency-Key. The
 * same key twice gives one effect (one agent and one launch, one key, one checkout session) and
 * the same answer, the second marked `Idempotent-Replayed: true`.
 */
const bed = useAgentsTestBed();
let stripe: FakeStripe;
let user: TestSession;
let agentId: string;
const SETTINGS = ['CARD_SECRET_KEY', 'CARD_API_HOST', 'CARD_API_PORT', 'CARD_API_PROTOCOL', 'CARD_WEBHOOK_SECRET', 'CARD_PRICES', 'CARD_CREDIT_PRICES'];

beforeAll(async () => {
  stripe = await startFakeStripe();
  reloadConfig({
    ...stripe.env,
    CARD_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CARD_PRICES: JSON.stringify({ solo: 'price_solo_m', label: 'price_label_m', collective: 'price_collective_m', network: 'price_network_m' }),
    CARD_CREDIT_PRICES: JSON.stringify({ price_credits_1000: 1000 }),
  });
  // A running instance, so a memory reset has something to relaunch.
  ({ user, agentId } = await runningAgent(bed, 'pro'));
});

afterAll(async () => {
  reloadConfig(Object.fromEntries(SETTINGS.map((k) => [k, undefined])));
  await stripe.close();
});

/** The same request twice under one key: the second answer is the first, replayed. */
async function twice(method: string, path: string, opts: CallOptions) {
  const withKey = { ...opts, headers: { ...opts.headers, 'idempotency-key': randomUUID() } };
  const first = await call(method, path, withKey);
  expect(first.status, first.text).toBeLessThan(300);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  const again = await call(method, path, withKey);
  expect(again.status).toBe(first.status);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(first.body);
  return first;
}

describe('Idempotency-Key on writes', () => {
  it('provision: one agent and one launch job for a repeated key', async () => {
    const before = (await call('GET', '/api/agents/provision', { session: user })).body.count as number;
    const first = await twice('POST', '/api/agents/provision', { session: user, body: { name: 'Retried bot' }, ip: uniqueIp() });
    const listed = await call('GET', '/api/agents/provision', { session: user });
    expect(listed.body.count).toBe(before + 1);
    const jobs = await drain(bed.queueUrl);
    expect(jobs.filter((j) => JSON.stringify(j).includes(first.body.agent.id))).toHaveLength(1);
  });

  it('memory writes: a retried single or bulk write replays its answer and never writes over a newer value', async () => {
    const key = randomUUID();
    const write = (memory: unknown, idem?: string) =>
      call('POST', '/api/memory', { session: user, body: { agentId, key: 'venue', memory }, headers: idem ? { 'idempotency-key': idem } : {} });
    const first = await write('The Fleece', key);
    expect(first.status).toBe(200);
    expect((await write('The Louisiana')).status).toBe(200);
    const retried = await write('The Fleece', key);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(first.body);
    const read = await call('GET', `/api/memory?agentId=${agentId}`, { session: user });
    expect(read.body.memory.venue).toBe('The Louisiana');

    await twice('POST', '/api/memory', { session: user, body: { agentId, memory: { a: 1, b: 2 } } });
  });

  it('memory reset: a retried reset replays its answer and relaunches the instance once', async () => {
    await drain(bed.queueUrl);
    await twice('POST', `/api/instance/${user.userId}/reset-memory`, { session: user, ip: uniqueIp() });
    expect(await drain(bed.queueUrl)).toHaveLength(1);
  });

  it('API key creation: one key, the same secret replayed, and the kept copy is not in the clear', async () => {
    const session = await accountSession();
    const first = await twice('POST', '/api/keys', { session, body: { name: 'ci' } });
    expect(first.body.key).toEqual(expect.any(String));
    const listed = await call('GET', '/api/keys', { session });
    expect(listed.body.keys).toHaveLength(1);
    const stored = JSON.stringify(await tenant(session.userId).queryAll('IDEMPOTENCY#', { consistent: true }));
    expect(stored).toContain('sealedBody');
    expect(stored).not.toContain(first.body.key);
  });

  it('checkout and credit purchase: one checkout session at the processor for a repeated key', async () => {
    const created = await createUser({ email: `${randomUUID()}@example.com` });
    const session = await testSession({ userId: created.userId, email: created.email });
    for (const body of [
      { action: 'create-checkout', plan: 'solo' },
      { action: 'buy-credits', price: 'price_credits_1000' },
    ]) {
      const sent = stripe.requests.length;
      const first = await twice('POST', '/api/billing', { session, body });
      expect(first.body.url).toMatch(/^https:\/\//);
      expect(stripe.requests.slice(sent).filter((r) => r.path === '/v1/checkout/sessions')).toHaveLength(1);
    }
  });
});
