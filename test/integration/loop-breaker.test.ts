import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { isQueuedEmail, type QueuedEmail } from '#adapters/email-queue';
import { AgentLoopPausedError, generateChat } from '#domain/ai/model-layer';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { pauseAgentForBudget } from '#data/agents';
import { catalogue, costUsd } from '#domain/models/catalogue';
import { skill } from '#functions/http/skills/skills/booking-settlement';
import { accountSession, call, storeActiveSubscription, type TestSession } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { useFakeModelProviders } from '../helpers/model-providers';
import { runSkill } from '../helpers/skill-call';
import { putTestAgent } from '../security/route-samples';
import { sqsEvent, sqsRecord } from './agents-helpers';

const bed = useFakeModelProviders();
const MODEL = 'openai/gpt-4o-mini';
const REPEAT_LIMIT = 5;
const TOOL = { name: 'booking_settlement', description: 'simulate a settlement', parameters: { type: 'object', properties: {} } };

async function ownerWithAgent(): Promise<{ owner: TestSession; agentId: string }> {
  const owner = await accountSession();
  await storeActiveSubscription(owner.userId, 'solo');
  const agentId = await putTestAgent(owner.userId);
  const put = await call('PUT', `/api/agents/${agentId}/loop-breaker`, {
    session: owner,
    body: { repeatLimit: REPEAT_LIMIT, windowSeconds: 600, spendShare: 0.25, spendWindowMinutes: 15 },
  });
  expect(put.status).toBe(200);
  return { owner, agentId };
}

const events = async (userId: string, type: string) => (await listLifecycleEvents(userId, 200)).events.filter((e) => e.type === type);

/**
 * One turn of an agent runtime's tool loop, as the runtime drives it: the model (scripted to call the
 * skill) asks for a tool call, the agent calls the skill, and the model is asked again with the result.
 * Answers the skill call's status and code.
 */
async function agentTurn(userId: string, agentId: string, prompt: string, booking: Record<string, number>) {
  const caller = { kind: 'account' as const, account: { userId, isAdmin: false, isTester: false }, agentId };
  const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
  const first = await generateChat({ caller, model: MODEL, maxTokens: 30, messages, clientTools: [TOOL] });
  const toolCall = first.toolCalls[0]!;
  const result = await runSkill(skill, userId, { action: 'simulate_settlement', booking }, { agentId });
  if (result.status !== 200) return { status: result.status, code: result.body.code };
  messages.push(
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: toolCall.id, toolName: toolCall.name, input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: toolCall.id, toolName: toolCall.name, output: { type: 'json', value: result.body } }] },
  );
  await generateChat({ caller, model: MODEL, maxTokens: 30, messages, clientTools: [TOOL] });
  return { status: 200 };
}

describe('the loop breaker', () => {
  it('an agent repeating one skill call is paused at the limit with the event and mail, its calls answer 402, and the owner resumes it', async () => {
    const captured = await captureEvents();
    bed.model.toolCall = { name: TOOL.name, input: {} };
    try {
      const { owner, agentId } = await ownerWithAgent();
      const booking = { guarantee: 1500, backend: 70, deposit: 500 };
      const outcomes = [];
      for (let turn = 1; turn <= REPEAT_LIMIT; turn += 1) outcomes.push(await agentTurn(owner.userId, agentId, 'settle the booking', booking));
      expect(outcomes.slice(0, REPEAT_LIMIT - 1).every((o) => o.status === 200)).toBe(true);
      expect(outcomes.at(-1)).toEqual({ status: 402, code: 'AGENT_LOOP_PAUSED' });

      const [detected, ...more] = await events(owner.userId, 'agent.loop_detected');
      expect(more).toEqual([]);
      expect(detected).toMatchObject({
        agentId,
        cause: 'loop-breaker',
        details: { kind: 'repeated-call', call: 'skill:booking-settlement', count: REPEAT_LIMIT },
      });
      expect(typeof detected!.details!.signature).toBe('string');

      // Metered calls of the paused agent are refused with their own code, over the model layer and as HTTP.
      const caller = { kind: 'account' as const, account: { userId: owner.userId, isAdmin: false, isTester: false }, agentId };
      await expect(generateChat({ caller, model: MODEL, messages: [{ role: 'user', content: 'anything new' }] })).rejects.toBeInstanceOf(AgentLoopPausedError);
      const other = await runSkill(skill, owner.userId, { action: 'simulate_settlement', booking: { guarantee: 1, backend: 1, deposit: 0 } }, { agentId });
      expect(other).toMatchObject({ status: 402, body: { code: 'AGENT_LOOP_PAUSED' } });

      const read = await call('GET', `/api/agents/${agentId}`, { session: owner });
      expect(read.body.agent.paused).toMatchObject({ reason: 'loop', loop: { count: REPEAT_LIMIT, signature: detected!.details!.signature } });
      expect((await call('GET', `/api/agents/${agentId}/loop-breaker`, { session: owner })).body.loopBreaker).toMatchObject({
        paused: true,
        trip: { kind: 'repeated-call' },
      });

      // The webhook and the owner's email.
      const drained = await captured.drain();
      expect(drained.filter((e) => e.accountId === owner.userId).map((e) => e.type)).toContain('agent.loop_detected');
      const mails = drained.filter((m) => isQueuedEmail(m) && (m as unknown as QueuedEmail).userId === owner.userId);
      expect(mails).toHaveLength(1);
      const { handler: eventsWorker } = await import('#functions/workers/webhook-delivery/handler');
      expect((await eventsWorker(sqsEvent(...mails.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
      expect((await readOutbox(owner.email)).map((m) => m.subject)).toEqual([`Agent ${agentId} was paused: it looks like a runaway loop`]);

      // Another account cannot resume it; the owner can, and the agent calls again.
      const intruder = await accountSession();
      expect((await call('POST', `/api/agents/${agentId}/loop-breaker/resume`, { session: intruder })).status).toBe(404);
      const resumed = await call('POST', `/api/agents/${agentId}/loop-breaker/resume`, { session: owner });
      expect(resumed.body).toMatchObject({ resumed: true, loopBreaker: { paused: false, trip: null } });
      expect((await call('GET', `/api/agents/${agentId}`, { session: owner })).body.agent.paused).toBeUndefined();
      expect(await agentTurn(owner.userId, agentId, 'settle the booking', booking)).toEqual({ status: 200 });
      expect((await events(owner.userId, 'agent.resumed')).length).toBe(1);
    } finally {
      bed.model.toolCall = undefined;
    }
  });

  it('a realistic mixed conversation of the same length does not trip it', async () => {
    bed.model.toolCall = { name: TOOL.name, input: {} };
    try {
      const { owner, agentId } = await ownerWithAgent();
      const outcomes = [];
      // The same skill, different bookings; a repeated question gets a different booking's answer.
      for (let turn = 1; turn <= REPEAT_LIMIT * 2; turn += 1) {
        const prompt = turn % 3 === 0 ? 'and now?' : `settle booking ${turn}`;
        outcomes.push(await agentTurn(owner.userId, agentId, prompt, { guarantee: 1000 + turn, backend: 70, deposit: 500 }));
      }
      expect(outcomes.every((o) => o.status === 200)).toBe(true);
      // Ordinary chats ending in a user's message are never counted, however alike.
      const caller = { kind: 'account' as const, account: { userId: owner.userId, isAdmin: false, isTester: false }, agentId };
      for (let i = 0; i < REPEAT_LIMIT * 2; i += 1)
        await generateChat({ caller, model: MODEL, maxTokens: 30, messages: [{ role: 'user', content: 'continue' }] });
      expect(await events(owner.userId, 'agent.loop_detected')).toEqual([]);
      expect((await call('GET', `/api/agents/${agentId}`, { session: owner })).body.agent.paused).toBeUndefined();
    } finally {
      bed.model.toolCall = undefined;
    }
  });

  it('20 concurrent identical calls trip it once: one event, one mail', async () => {
    const captured = await captureEvents();
    const { owner, agentId } = await ownerWithAgent();
    const body = { action: 'simulate_settlement', booking: { guarantee: 900, backend: 60, deposit: 100 } };
    const results = await Promise.all(Array.from({ length: 20 }, () => runSkill(skill, owner.userId, body, { agentId })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(REPEAT_LIMIT - 1);
    expect(results.filter((r) => r.status === 402 && r.body.code === 'AGENT_LOOP_PAUSED')).toHaveLength(20 - (REPEAT_LIMIT - 1));
    expect(await events(owner.userId, 'agent.loop_detected')).toHaveLength(1);
    const drained = await captured.drain();
    expect(drained.filter((m) => isQueuedEmail(m) && (m as unknown as QueuedEmail).userId === owner.userId)).toHaveLength(1);
  });

  it('trips on spend velocity: past its share of the monthly cap within the window, with the spend as evidence', async () => {
    const captured = await captureEvents();
    const { owner, agentId } = await ownerWithAgent();
    // A plain user question each time: no signature repeats, only the spend adds up.
    const perCall = costUsd(catalogue().models.find((m) => m.id === MODEL)!, 10, 'fake answer to: hello'.length);
    // The share (a quarter) of this cap is four and a half calls: the fifth call's spend passes it.
    const monthlyCapUsd = perCall * 18;
    expect((await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd } })).status).toBe(200);
    const caller = { kind: 'account' as const, account: { userId: owner.userId, isAdmin: false, isTester: false }, agentId };
    const ask = () => generateChat({ caller, model: MODEL, maxTokens: 30, messages: [{ role: 'user', content: 'hello' }] });
    for (let i = 0; i < 4; i += 1) await ask();
    expect(await events(owner.userId, 'agent.loop_detected')).toEqual([]);
    await ask();
    await expect(ask()).rejects.toBeInstanceOf(AgentLoopPausedError);
    const [detected, ...more] = await events(owner.userId, 'agent.loop_detected');
    expect(more).toEqual([]);
    expect(detected).toMatchObject({ agentId, reason: 'spend-velocity', details: { kind: 'spend-velocity', monthlyCapUsd, windowSeconds: 15 * 60 } });
    expect(detected!.details!.spentUsd).toBeCloseTo(perCall * 5, 12);
    // Below the cap itself: the budget has not stopped it, the breaker has.
    expect(await events(owner.userId, 'budget.exceeded')).toEqual([]);
    const drained = await captured.drain();
    expect(drained.filter((m) => isQueuedEmail(m) && (m as unknown as QueuedEmail).userId === owner.userId)).toHaveLength(1);
  });

  it('a budget pause and a loop pause hold the agent side by side: lifting one leaves the other', async () => {
    const { owner, agentId } = await ownerWithAgent();
    const body = { action: 'simulate_settlement', booking: { guarantee: 800, backend: 50, deposit: 100 } };
    const pausedOf = async () => (await call('GET', `/api/agents/${agentId}`, { session: owner })).body.agent.paused;

    // The cap pauses it first; then its repeated skill calls trip the loop breaker all the same.
    expect(await pauseAgentForBudget(owner.userId, agentId)).toBe(true);
    for (let i = 0; i < REPEAT_LIMIT; i += 1) await runSkill(skill, owner.userId, body, { agentId });
    expect(await events(owner.userId, 'agent.loop_detected')).toHaveLength(1);
    expect(await pausedOf()).toMatchObject({ reason: 'loop', reasons: ['loop', 'budget'], loop: { kind: 'repeated-call' } });

    // Raising the cap lifts the budget's pause only: the loop breaker still holds the agent.
    const raised = await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd: 100 } });
    expect(raised.body.resumed).toBe(true);
    expect(await pausedOf()).toMatchObject({ reason: 'loop', reasons: ['loop'] });
    expect(await runSkill(skill, owner.userId, body, { agentId })).toMatchObject({ status: 402, body: { code: 'AGENT_LOOP_PAUSED' } });

    // A cap crossed while it is loop-paused (calls in flight settling) does not replace the loop's pause, and resuming the loop leaves the cap's.
    expect(await pauseAgentForBudget(owner.userId, agentId)).toBe(true);
    expect(await pausedOf()).toMatchObject({ reason: 'loop', reasons: ['loop', 'budget'] });
    expect((await call('POST', `/api/agents/${agentId}/loop-breaker/resume`, { session: owner })).body.resumed).toBe(true);
    expect(await pausedOf()).toMatchObject({ reason: 'budget', reasons: ['budget'] });
    expect((await call('PUT', `/api/agents/${agentId}/budget`, { session: owner, body: { monthlyCapUsd: 100 } })).body.resumed).toBe(true);
    expect(await pausedOf()).toBeUndefined();
    expect(await runSkill(skill, owner.userId, body, { agentId })).toMatchObject({ status: 200 });
  });

  it('validates the thresholds', async () => {
    const { owner, agentId } = await ownerWithAgent();
    const bad = await call('PUT', `/api/agents/${agentId}/loop-breaker`, {
      session: owner,
      body: { repeatLimit: 1, windowSeconds: 600, spendShare: 0.25, spendWindowMinutes: 15 },
    });
    expect(bad.status).toBe(400);
    expect((await call('GET', `/api/agents/${agentId}/loop-breaker`, { session: owner })).body.loopBreaker.settings.repeatLimit).toBe(REPEAT_LIMIT);
  });
});
