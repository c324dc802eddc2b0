import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateChat, streamChat, type AccountIdentity } from '#domain/ai/model-layer';
import { modelUsageReport } from '#domain/ai/usage-report';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser } from '#data/users';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { openFailovers } from '../../web/src/failover';
import { call as callApi, testSession, uniqueIp } from '../helpers/api';
import { subscribe } from './agents-helpers';

// Two providers on loopback: the aggregator serves the primary, Anthropic's own API the fallback.
let primary: FakeModelServer;
let fallback: FakeModelServer;
const saved = { ...process.env };
const SETTINGS = [
  'MODEL_API_BASE_URL',
  'MODEL_API_KEY',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_API_KEY',
  'MODEL_FIRST_TOKEN_TIMEOUT_MS',
  'MODEL_RESPONSE_TIMEOUT_MS',
  'MODEL_BREAKER_FAILURES',
  'MODEL_BREAKER_COOLDOWN_SECONDS',
];

beforeAll(async () => {
  [primary, fallback] = await Promise.all([startFakeModelServer(), startFakeModelServer()]);
  reloadConfig({
    MODEL_API_BASE_URL: primary.baseUrl,
    MODEL_API_KEY: 'primary-key',
    ANTHROPIC_BASE_URL: fallback.baseUrl,
    ANTHROPIC_API_KEY: 'fallback-key',
    MODEL_FIRST_TOKEN_TIMEOUT_MS: '1500',
    MODEL_RESPONSE_TIMEOUT_MS: '1500',
    MODEL_BREAKER_FAILURES: '3',
    MODEL_BREAKER_COOLDOWN_SECONDS: '1',
  });
});
afterAll(async () => {
  await Promise.all([primary.close(), fallback.close()]);
  reloadConfig(Object.fromEntries(SETTINGS.map((k) => [k, saved[k]])));
});

async function account(): Promise<AccountIdentity> {
  const { userId } = await createUser({ email: `${randomUUID()}@example.com` });
  await subscribe(userId, 'solo', 'active');
  return { userId, isAdmin: false, isTester: false };
}

const PRIMARY = 'openai/gpt-4o-mini';
const FALLBACK = 'anthropic/claude-3-5-haiku';
const ask = (text: string) => [{ role: 'user' as const, content: text }];
const call = (caller: AccountIdentity, text: string, agentId = 'agt_failover') => ({
  caller: { kind: 'account' as const, account: caller, agentId },
  model: PRIMARY,
  fallbackModels: [FALLBACK],
  messages: ask(text),
});
const eventsOf = async (userId: string) => (await listLifecycleEvents(userId, 100)).events;

describe('model failover', () => {
  it('429, then 500, then a hang past the first-token bound: the fallback answers, no error reaches the caller; usage and events name the model used', async () => {
    const caller = await account();
    try {
      primary.failWith = 429;
      const a = await generateChat(call(caller, 'one'));
      expect(a).toMatchObject({ model: FALLBACK, fallbackFrom: PRIMARY, text: fakeAnswerTo('one'), servedBy: 'anthropic' });
      primary.failWith = 500;
      const b = await streamChat(call(caller, 'two'));
      let text = '';
      for await (const d of b.textStream) text += d;
      expect(text).toBe(fakeAnswerTo('two'));
      expect(b).toMatchObject({ model: FALLBACK, fallbackFrom: PRIMARY });
      primary.failWith = undefined;
      primary.hang = true;
      const started = performance.now();
      const c = await streamChat(call(caller, 'three'));
      for await (const _ of c.textStream);
      expect(c.model).toBe(FALLBACK);
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      primary.failWith = undefined;
      primary.hang = false;
    }
    const usage = await tenant(caller.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ model: FALLBACK, fallbackFrom: PRIMARY, fallbackCalls: 3, calls: 3 });
    const today = new Date();
    const period = { start: today.toISOString().slice(0, 10), end: new Date(today.getTime() + 86_400_000).toISOString() };
    const report = await modelUsageReport(caller.userId, period, 'solo');
    expect(report.models).toEqual([expect.objectContaining({ model: FALLBACK, calls: 3, fallbackCalls: 3 })]);
    expect(report.agents).toEqual([expect.objectContaining({ agentId: 'agt_failover', fallbackCalls: 3 })]);
    const events = await eventsOf(caller.userId);
    const failovers = events.filter((e) => e.type === 'model.failover');
    expect(failovers).toHaveLength(1);
    expect(failovers[0]).toMatchObject({ agentId: 'agt_failover', reason: 'rate-limited', details: { model: PRIMARY, fallback: FALLBACK } });
    // The events route carries the details the console's agent page reads to say which model answers.
    const session = await testSession({ userId: caller.userId });
    const listed = (await callApi('GET', `/api/instance/${caller.userId}/events?limit=100`, { session, ip: uniqueIp() })).body.events;
    expect(openFailovers(listed, 'agt_failover')).toEqual([expect.objectContaining({ model: PRIMARY, fallback: FALLBACK, cause: 'rate-limited' })]);
  });

  it('the breaker opens after N failures, sends traffic to the fallback, probes after the cool-down and returns to the primary', async () => {
    const caller = await account();
    // A model of its own, so the earlier test's failures do not count here.
    const own = { ...call(caller, 'x'), model: 'google/gemini-2.0-flash' };
    primary.failWith = 503;
    for (let i = 0; i < 3; i += 1) expect((await generateChat({ ...own, messages: ask(`fail ${i}`) })).model).toBe(FALLBACK);
    primary.failWith = undefined;
    // Open: the primary is not asked, though it would answer now.
    const before = primary.requests.length;
    expect((await generateChat({ ...own, messages: ask('while open') })).model).toBe(FALLBACK);
    expect(primary.requests.length).toBe(before);
    // After the cool-down one call probes the primary, which answers, and the breaker closes.
    await new Promise((r) => setTimeout(r, 1_100));
    const probe = await generateChat({ ...own, messages: ask('probe') });
    expect(probe.model).toBe('google/gemini-2.0-flash');
    expect(probe.fallbackFrom).toBeUndefined();
    expect((await generateChat({ ...own, messages: ask('after') })).model).toBe('google/gemini-2.0-flash');
    const types = (await eventsOf(caller.userId)).map((e) => e.type);
    expect(types).toEqual(['model.failover', 'model.restored']);
  });

  it('a failure after the first streamed token ends that stream with its error and no second model answers it', async () => {
    const caller = await account();
    const fallbackRequests = fallback.requests.length;
    primary.beforeLastChunk = () => Promise.reject(new Error('broken'));
    try {
      const stream = await streamChat({ ...call(caller, 'a long answer to break'), model: 'mistral/mistral-small' });
      expect(stream.model).toBe('mistral/mistral-small');
      const seen: string[] = [];
      const err = await (async () => {
        for await (const d of stream.textStream) seen.push(d);
      })().catch((e) => e);
      expect(seen.length).toBeGreaterThan(0);
      expect(err?.code).toBe('PROVIDER_ERROR');
      await expect(stream.result).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    } finally {
      primary.beforeLastChunk = undefined;
    }
    expect(fallback.requests.length).toBe(fallbackRequests);
  });
});

describe('a whole answer (not streamed)', () => {
  it('whose primary hangs is answered by the fallback once MODEL_RESPONSE_TIMEOUT_MS has passed, with the cause in the event', async () => {
    const caller = await account();
    // A model of its own, so no earlier failure has opened its breaker.
    const own = { ...call(caller, 'a hung whole answer'), model: 'mistral/mistral-small' };
    const primaryRequests = primary.requests.length;
    primary.hang = true;
    try {
      const started = performance.now();
      const out = await generateChat(own);
      expect(out).toMatchObject({ model: FALLBACK, fallbackFrom: 'mistral/mistral-small', text: fakeAnswerTo('a hung whole answer') });
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      primary.hang = false;
    }
    expect(primary.requests.length).toBe(primaryRequests + 1);
    const failover = (await eventsOf(caller.userId)).find((e) => e.type === 'model.failover');
    expect(failover).toMatchObject({ reason: 'response-timeout', details: { model: 'mistral/mistral-small', fallback: FALLBACK } });
  });
});

describe('an agent fallback chain', () => {
  it('is stored within the plan and refused with FALLBACK_MODEL_NOT_ALLOWED outside it', async () => {
    const { putAgentConfig } = await import('#domain/agents/read');
    const { userId } = await createUser({ email: `${randomUUID()}@example.com` });
    await subscribe(userId, 'label', 'active');
    const auth = { userId, email: 'x@example.com', isAdmin: false, isTester: false } as Parameters<typeof putAgentConfig>[0];
    const err = await putAgentConfig(auth, 'agt_none', { fallbackModels: ['anthropic/claude-opus-4'] }).catch((e) => e);
    expect(err).toMatchObject({ code: 'FALLBACK_MODEL_NOT_ALLOWED', kind: 'invalid', details: { model: 'anthropic/claude-opus-4' } });
    // Within the plan the check passes and the agent lookup answers (no such agent here).
    await expect(putAgentConfig(auth, 'agt_none', { fallbackModels: ['google/gemini-2.0-flash'] })).rejects.toMatchObject({ kind: 'notFound' });
  });
});
