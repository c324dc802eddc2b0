import { describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { isQueuedEmail, type QueuedEmail } from '#adapters/email-queue';
import { catalogue, costUsd } from '#domain/models/catalogue';
import { BudgetExceededError, estimatePromptTokens, generateChat } from '#domain/ai/model-layer';
import { ACCOUNT_SCOPE, agentScope, getSpend } from '#data/budgets';
import { getAgent } from '#data/agents';
import { getInstance } from '#data/instances';
import * as keys from '#data/keys';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { tenant } from '#data/tenant';
import { accountSession, call, storeActiveSubscription, type TestSession } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { useFakeModelProviders } from '../helpers/model-providers';
import { putRunningInstance, putTestAgent } from '../security/route-samples';
import { privateQueue, sqsEvent, sqsRecord } from './agents-helpers';

const bed = useFakeModelProviders();

const MODEL = 'openai/gpt-4o-mini';
const MAX_TOKENS = 30;
const model = () => catalogue().models.find((m) => m.id === MODEL)!;
/** What the fake charges per `hello` call (10 prompt tokens, the 21 characters of its answer), and what the metering reserves for it. */
const callCost = () => costUsd(model(), 10, 'fake answer to: hello'.length);
const callReservation = () => costUsd(model(), estimatePromptTokens([{ role: 'user', content: 'hello' }]), MAX_TOKENS);

async function subscriber(): Promise<TestSession> {
  const session = await accountSession();
  await storeActiveSubscription(session.userId, 'solo');
  return session;
}

const chat = (session: TestSession) =>
  call('POST', '/api/ai/chat', { session, body: { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hello' }] } });

const eventTypes = async (userId: string) => (await listLifecycleEvents(userId, 100)).events.map((e) => e.type);

describe('budgets: routes', () => {
  it('sets, reads and removes the account and agent caps; another account gets 404 for the agent', async () => {
    const owner = await subscriber();
    const agentId = await putTestAgent(owner.userId);
    expect((await call('GET', '/api/budget', { session: owner })).body.budget).toMatchObject({
      scope: 'account',
      monthlyCapUsd: null,
      spentUsd: 0,
      status: 'ok',
    });
    const put = await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: 12.5 } });
    expect(put.status).toBe(200);
    expect(put.body.budget.monthlyCapUsd).toBe(12.5);
    const agentPut = await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd: 2 } });
    expect(agentPut.body.budget).toMatchObject({ scope: 'agent', agentId, monthlyCapUsd: 2, paused: false });
    expect((await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: -1 } })).status).toBe(400);
    const intruder = await subscriber();
    expect((await call('GET', `/api/agents/${agentId}/budget`, { session: intruder })).status).toBe(404);
    expect((await call('PUT', `/api/agents/${agentId}/budget`, { session: intruder, body: { monthlyCapUsd: 1000 } })).status).toBe(404);
    expect((await call('GET', `/api/agents/${agentId}/budget`, { session: owner })).body.budget.monthlyCapUsd).toBe(2);
    await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: null } });
    expect((await call('GET', '/api/budget', { session: owner })).body.budget.monthlyCapUsd).toBeNull();
  });
});

describe('budgets: the account cap', () => {
  it('50 concurrent calls overshoot the cap by less than one call reservation; 80 % and 100 % alert once; the instance stops and resumes', async () => {
    const events = await captureEvents();
    const provisioning = await privateQueue();
    bed.apply({ PROVISIONING_QUEUE_URL: provisioning });
    try {
      const owner = await subscriber();
      await putRunningInstance(owner.userId);
      // Room for about seven calls.
      const cap = callCost() * 7.5;
      expect((await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: cap } })).status).toBe(200);

      const answers = await Promise.all(Array.from({ length: 50 }, () => chat(owner)));
      const admitted = answers.filter((a) => a.status === 200).length;
      const refused = answers.filter((a) => a.status === 402);
      expect(admitted + refused.length).toBe(50);
      expect(refused.every((a) => a.body.code === 'BUDGET_EXCEEDED')).toBe(true);
      expect(admitted).toBeGreaterThanOrEqual(1);
      expect(admitted).toBeLessThanOrEqual(Math.ceil(cap / callCost()) + 1);

      const { spentUsd } = await getSpend(owner.userId, ACCOUNT_SCOPE);
      expect(spentUsd).toBeCloseTo(admitted * callCost(), 12);
      // THE BOUND: below the cap plus one call's reservation.
      expect(spentUsd).toBeLessThan(cap + callReservation());
      expect(spentUsd).toBeGreaterThanOrEqual(cap * 0.8);

      // Reservations overestimate, so the burst may end just under the cap: single calls go on until it is reached, then stay refused.
      let more = 0;
      while ((await chat(owner)).status === 200) more += 1;
      expect(more).toBeLessThanOrEqual(2);
      expect((await chat(owner)).body.code).toBe('BUDGET_EXCEEDED');
      expect((await getSpend(owner.userId, ACCOUNT_SCOPE)).spentUsd).toBeLessThan(cap + callReservation());

      const types = await eventTypes(owner.userId);
      expect(types.filter((t) => t === 'budget.warning')).toHaveLength(1);
      expect(types.filter((t) => t === 'budget.exceeded')).toHaveLength(1);
      const instance = await getInstance(owner.userId, true);
      expect(instance).toMatchObject({ status: 'stopped', stopReason: 'budget' });
      const stopped = (await listLifecycleEvents(owner.userId, 100)).events.find((e) => e.type === 'instance.stopped');
      expect(stopped).toMatchObject({ cause: 'budget', reason: 'budget' });
      const drained = await events.drain();
      const queued = drained.filter((e) => e.accountId === owner.userId).map((e) => e.type);
      expect(queued).toEqual(expect.arrayContaining(['budget.warning', 'budget.exceeded', 'instance.stopped']));
      // The alerts are queued on the events queue, not mailed in the request: its worker sends them.
      const queuedMails = drained.filter((m) => isQueuedEmail(m) && (m as unknown as QueuedEmail).userId === owner.userId);
      expect(queuedMails).toHaveLength(2);
      expect(await readOutbox(owner.email)).toEqual([]);
      const { handler: eventsWorker } = await import('#functions/workers/webhook-delivery/handler');
      expect((await eventsWorker(sqsEvent(...queuedMails.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
      const mails = await readOutbox(owner.email);
      expect(mails.filter((m) => m.subject.startsWith('80 %'))).toHaveLength(1);
      expect(mails.filter((m) => m.subject.includes('is reached'))).toHaveLength(1);
      expect((await call('GET', '/api/budget', { session: owner })).body.budget).toMatchObject({ status: 'exceeded', paused: true });

      // Raising the cap resumes the instance and lets calls through again.
      const raised = await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: cap * 10 } });
      expect(raised.body).toMatchObject({ resumed: true, budget: { status: 'ok', paused: false } });
      expect(await getInstance(owner.userId, true)).toMatchObject({ status: 'provisioning', op: 'start' });
      expect((await getInstance(owner.userId, true))?.stopReason).toBeUndefined();
      expect((await chat(owner)).status).toBe(200);
    } finally {
      await events.stop();
    }
  });

  it('a stop the user asked for is not undone by raising the cap', async () => {
    const owner = await subscriber();
    await putRunningInstance(owner.userId);
    await tenant(owner.userId).update(keys.instance(owner.userId), {
      expression: 'SET #s = :stopped',
      names: { '#s': 'status' },
      values: { ':stopped': 'stopped' },
    });
    const raised = await call('PUT', '/api/budget', { session: owner, body: { monthlyCapUsd: 100 } });
    expect(raised.body.resumed).toBe(false);
    expect((await getInstance(owner.userId, true))?.status).toBe('stopped');
  });
});

describe('budgets: an agent cap', () => {
  it("pauses only that agent at its cap: its calls get BUDGET_EXCEEDED, the account's other calls go on; raising it resumes the agent", async () => {
    const owner = await subscriber();
    const agentId = await putTestAgent(owner.userId);
    const account = { userId: owner.userId, isAdmin: false, isTester: false };
    const ask = () =>
      generateChat({ caller: { kind: 'account', account, agentId }, model: MODEL, maxTokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hello' }] });
    await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd: callCost() * 2.4 } });

    await ask();
    await ask();
    expect(await eventTypes(owner.userId)).toEqual(['budget.warning']);
    await ask();
    await expect(ask()).rejects.toBeInstanceOf(BudgetExceededError);
    const types = await eventTypes(owner.userId);
    expect(types).toEqual(['budget.warning', 'budget.exceeded', 'agent.paused']);
    expect((await getAgent(owner.userId, agentId, true))?.pausedReason).toBe('budget');
    expect((await getSpend(owner.userId, agentScope(agentId))).spentUsd).toBeCloseTo(callCost() * 3, 12);
    // The account (no cap) still calls without the agent.
    expect((await chat(owner)).status).toBe(200);

    const raised = await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd: 1 } });
    expect(raised.body).toMatchObject({ resumed: true, budget: { paused: false, status: 'ok' } });
    expect(await eventTypes(owner.userId)).toContain('agent.resumed');
    expect((await ask()).text).toBe('fake answer to: hello');
  });
});
