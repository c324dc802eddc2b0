import { describe, expect, it } from 'vitest';
import { deliverDueKeptMessages } from '#domain/chat/wake-delivery';
import { runDueSchedules } from '#functions/workers/heartbeat/scheduled-prompts';
import { reloadConfig } from '#platform/config';
import { messagesBefore } from '#data/chat-history';
import { gatewayToken, getInstance } from '#data/instances';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { createSchedule } from '#data/schedules';
import { claimWakeDelivery, getWakeDelivery } from '#data/wake-deliveries';
import { call, uniqueIp } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { idleStopInstance, pumpProvisioningUntil, runningAgent, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();

const pumpUntil = (done: () => Promise<boolean>) => pumpProvisioningUntil(bed.queueUrl, done);
const idleStop = (userId: string) => idleStopInstance(bed, userId);

const launchesOf = (userId: string) => bed.launcher.launchesFor(userId).length;
const isRunning = (userId: string) => async () => (await getInstance(userId, true))?.status === 'running';
const history = async (userId: string, agentId: string) => (await messagesBefore(userId, agentId, 100)).messages.map((m) => `${m.role}:${m.content}`);

describe('wake on demand', () => {
  it('a chat to an idle-stopped agent wakes it (one launch, a wake event) and is answered once', async () => {
    const { user, agentId } = await runningAgent(bed);
    await idleStop(user.userId);
    const before = launchesOf(user.userId);

    const answer = call('POST', '/api/chat', { session: user, body: { agentId, message: 'good morning' } });
    await pumpUntil(isRunning(user.userId));
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body.reply).toMatchObject({ role: 'assistant', content: fakeAnswerTo('good morning') });
    expect(launchesOf(user.userId)).toBe(before + 1);
    expect(await history(user.userId, agentId)).toEqual([`assistant:${fakeAnswerTo('good morning')}`, 'user:good morning']);
    const requested = (await listLifecycleEvents(user.userId, 50)).events.filter((e) => e.type === 'instance.requested' && e.cause === 'wake');
    expect(requested).toEqual([expect.objectContaining({ op: 'start', details: { wokenBy: 'chat' } })]);
  });

  it('20 concurrent chats to a sleeping agent cause exactly one launch and 20 answers', async () => {
    const { user, agentId } = await runningAgent(bed);
    await idleStop(user.userId);
    const before = launchesOf(user.userId);
    const texts = Array.from({ length: 20 }, (_, i) => `message ${i}`);

    const answers = Promise.all(texts.map((message) => call('POST', '/api/chat', { session: user, body: { agentId, message } })));
    await pumpUntil(isRunning(user.userId));
    const results = await answers;
    expect(results.map((r) => r.status)).toEqual(texts.map(() => 200));
    expect(results.map((r) => r.body.reply.content).sort()).toEqual(texts.map(fakeAnswerTo).sort());
    expect(launchesOf(user.userId)).toBe(before + 1);
    const events = (await listLifecycleEvents(user.userId, 100)).events;
    expect(events.filter((e) => e.type === 'instance.requested' && e.cause === 'wake')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'instance.running')).toHaveLength(2);
  });

  it('an agent its owner stopped is not woken: 409 AGENT_NOT_RUNNING, no launch', async () => {
    const { user, agentId } = await runningAgent(bed);
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    await pumpUntil(async () => (await bed.launcher.aliveFor(user.userId)).length === 0);
    const before = launchesOf(user.userId);
    const res = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'wake up?' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('AGENT_NOT_RUNNING');
    expect(await getInstance(user.userId, true)).toMatchObject({ status: 'stopped' });
    expect(launchesOf(user.userId)).toBe(before);
  });

  it('past the wait a chat gets 202; the kept message is delivered once when the instance runs, also after a dead deliverer', async () => {
    const { user, agentId } = await runningAgent(bed);
    await idleStop(user.userId);
    reloadConfig({ WAKE_WAIT_SECONDS: '0' });
    let first: Awaited<ReturnType<typeof call>>;
    let second: Awaited<ReturnType<typeof call>>;
    try {
      first = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'kept one' } });
      second = await call('POST', '/api/agent', { session: user, body: { action: 'chat', agentId, message: 'kept two' } });
    } finally {
      reloadConfig({ WAKE_WAIT_SECONDS: undefined });
    }
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'waking', agentId, operationId: expect.stringMatching(/^op_/), deliveryId: expect.stringMatching(/^wdl_/) });
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({ status: 'waking', operationId: first.body.operationId, sessionId: expect.any(String) });

    // A deliverer claims the second message for three minutes and dies with it.
    expect(await claimWakeDelivery(user.userId, second.body.deliveryId, new Date(Date.now() + 3 * 60_000))).toBeDefined();
    // The launch settling delivers what nobody holds; the second stays kept while its lease runs.
    await pumpUntil(isRunning(user.userId));
    expect(await getWakeDelivery(user.userId, first.body.deliveryId)).toMatchObject({ status: 'delivered', answer: fakeAnswerTo('kept one') });
    expect(await getWakeDelivery(user.userId, second.body.deliveryId)).toMatchObject({ status: 'pending' });
    // Minute sweeps after the lease ran out: the message goes once, however many sweeps see it.
    const later = new Date(Date.now() + 4 * 60_000);
    const sweeps = [await deliverDueKeptMessages(later), await deliverDueKeptMessages(later)];
    expect(sweeps.map((s) => s.delivered)).toEqual([1, 0]);
    expect(await getWakeDelivery(user.userId, second.body.deliveryId)).toMatchObject({ status: 'delivered', answer: fakeAnswerTo('kept two') });

    expect(await history(user.userId, agentId)).toEqual([
      `assistant:${fakeAnswerTo('kept two')}`,
      'user:kept two',
      `assistant:${fakeAnswerTo('kept one')}`,
      'user:kept one',
    ]);
    const session = await call('GET', `/api/agent?action=session&sessionId=${second.body.sessionId}`, { session: user });
    expect(session.body.messages.map((m: { content: string }) => m.content)).toEqual(['kept two', fakeAnswerTo('kept two')]);
    const delivered = (await listLifecycleEvents(user.userId, 100)).events.filter((e) => e.type === 'agent.delivered');
    expect(delivered.map((e) => e.details?.deliveryId).sort()).toEqual([first.body.deliveryId, second.body.deliveryId].sort());
  });

  it('a due scheduled run wakes the agent and runs once it is up', async () => {
    const { user, agentId } = await runningAgent(bed);
    await idleStop(user.userId);
    const before = launchesOf(user.userId);
    const at = new Date(Date.now() - 1000).toISOString();
    expect(await createSchedule(user.userId, { agentId, at, prompt: 'daily digest', nextRunAt: at }, 10)).toBeDefined();
    const sweep = runDueSchedules();
    await pumpUntil(isRunning(user.userId));
    const result = await sweep;
    expect(result.succeeded).toBeGreaterThanOrEqual(1);
    expect(launchesOf(user.userId)).toBe(before + 1);
    await runDueSchedules();
    expect((await history(user.userId, agentId)).filter((m) => m === 'user:daily digest')).toHaveLength(1);
  });

  it('an A2A message to an agent of an idle-stopped instance is stored and wakes the instance (one launch)', async () => {
    const { user, agentId } = await runningAgent(bed);
    const second = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Helper' }, ip: uniqueIp() });
    expect(second.status, second.text).toBe(201);
    const helperId = second.body.agent.id as string;
    await pumpUntil(isRunning(user.userId));
    await idleStop(user.userId);
    const before = launchesOf(user.userId);

    const token = await gatewayToken(user.userId);
    const sent = await call('POST', `/api/instance/${user.userId}/runtime/a2a`, {
      bearer: token,
      body: { fromAgentId: agentId, toAgentId: helperId, message: 'the venue moved to Hall B' },
    });
    expect(sent.status, sent.text).toBe(200);
    await pumpUntil(isRunning(user.userId));
    expect(launchesOf(user.userId)).toBe(before + 1);
    expect((await history(user.userId, helperId)).some((m) => m.endsWith('the venue moved to Hall B'))).toBe(true);
    const requested = (await listLifecycleEvents(user.userId, 50)).events.filter((e) => e.type === 'instance.requested' && e.cause === 'wake');
    expect(requested).toEqual([expect.objectContaining({ op: 'start', details: { wokenBy: 'a2a' } })]);
  });
});
