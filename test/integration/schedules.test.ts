import { beforeAll, describe, expect, it } from 'vitest';
import { runDueSchedules } from '#functions/workers/heartbeat/scheduled-prompts';
import { messagesBefore } from '#data/chat-history';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { claimRun, getSchedule, listRuns } from '#data/schedules';
import { accountSession, call, storeActiveSubscription, type TestSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { putTestAgent } from '../security/route-samples';
import { runningAgent, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();

const minute = 60_000;
const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms);

async function schedule(session: TestSession, agentId: string, body: Record<string, unknown>) {
  const res = await call('POST', `/api/agents/${agentId}/schedules`, { session, body });
  if (res.status !== 201) throw new Error(`could not schedule: ${res.status} ${res.text}`);
  return res.body.schedule as { id: string; nextRunAt: string };
}

const answersIn = async (userId: string, agentId: string, prompt: string) =>
  (await messagesBefore(userId, agentId, 100)).messages.filter((m) => m.role === 'assistant' && m.content === fakeAnswerTo(prompt));

const scheduleEvents = async (userId: string) => (await listLifecycleEvents(userId, 200)).events.filter((e) => e.type.startsWith('schedule.'));

describe('scheduled prompts: routes', () => {
  it('creates, lists, pauses, resumes and deletes; refuses bad timing; another account gets 404', async () => {
    const owner = await accountSession();
    await storeActiveSubscription(owner.userId, 'label');
    const agentId = await putTestAgent(owner.userId);
    const created = await schedule(owner, agentId, { cron: '*/5 * * * *', prompt: 'status?' });
    expect(new Date(created.nextRunAt).getUTCMinutes() % 5).toBe(0);
    expect((await call('GET', `/api/agents/${agentId}/schedules`, { session: owner })).body.schedules).toHaveLength(1);

    const paused = await call('PATCH', `/api/agents/${agentId}/schedules/${created.id}`, { session: owner, body: { paused: true } });
    expect(paused.body.schedule).toMatchObject({ status: 'paused', nextRunAt: null });
    const resumed = await call('PATCH', `/api/agents/${agentId}/schedules/${created.id}`, { session: owner, body: { paused: false } });
    expect(resumed.body.schedule.status).toBe('active');
    expect(resumed.body.schedule.nextRunAt).toBe(created.nextRunAt);

    for (const body of [
      { cron: '61 * * * *', prompt: 'x' },
      { cron: '0 0 30 2 *', prompt: 'x' },
      { prompt: 'x' },
      { cron: '* * * * *', at: new Date().toISOString(), prompt: 'x' },
      { at: '2020-01-01T00:00:00Z', prompt: 'x' },
    ]) {
      const res = await call('POST', `/api/agents/${agentId}/schedules`, { session: owner, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    // label allows 5 schedules.
    for (let i = 0; i < 4; i += 1) await schedule(owner, agentId, { at: new Date(Date.now() + 3_600_000).toISOString(), prompt: `later ${i}` });
    const over = await call('POST', `/api/agents/${agentId}/schedules`, { session: owner, body: { cron: '0 * * * *', prompt: 'one too many' } });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('SCHEDULE_LIMIT_REACHED');

    const intruder = await accountSession();
    await storeActiveSubscription(intruder.userId, 'network');
    expect((await call('GET', `/api/agents/${agentId}/schedules/${created.id}`, { session: intruder })).status).toBe(404);
    expect((await call('DELETE', `/api/agents/${agentId}/schedules/${created.id}`, { session: intruder })).status).toBe(404);
    expect((await call('POST', `/api/agents/${agentId}/schedules`, { session: intruder, body: { cron: '* * * * *', prompt: 'mine now' } })).status).toBe(404);

    expect((await call('DELETE', `/api/agents/${agentId}/schedules/${created.id}`, { session: owner })).status).toBe(200);
    expect((await call('GET', `/api/agents/${agentId}/schedules/${created.id}`, { session: owner })).status).toBe(404);
    // The deleted one gave its place back.
    expect((await call('POST', `/api/agents/${agentId}/schedules`, { session: owner, body: { cron: '0 * * * *', prompt: 'fits again' } })).status).toBe(201);
  });
});

describe('scheduled prompts: the sweeper', () => {
  let user: TestSession;
  let agentId: string;
  beforeAll(async () => {
    ({ user, agentId } = await runningAgent(bed));
  }, 120_000);

  it('a schedule due every minute runs once per slot, into the history, with an event per run', async () => {
    const prompt = `every minute ${Date.now()}`;
    const s = await schedule(user, agentId, { cron: '* * * * *', prompt });
    const first = s.nextRunAt;
    await runDueSchedules(new Date(first));
    await runDueSchedules(plus(first, 20_000));
    expect((await getSchedule(user.userId, agentId, s.id))?.nextRunAt).toBe(plus(first, minute).toISOString());
    await runDueSchedules(plus(first, minute));
    await runDueSchedules(plus(first, minute + 30_000));

    const runs = await listRuns(user.userId, s.id);
    expect(runs.map((r) => [r.slot, r.status])).toEqual([
      [first, 'succeeded'],
      [plus(first, minute).toISOString(), 'succeeded'],
    ]);
    expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(2);
    const events = (await scheduleEvents(user.userId)).filter((e) => (e.details as { scheduleId?: string })?.scheduleId === s.id);
    expect(events.map((e) => e.type)).toEqual(['schedule.run', 'schedule.run']);
    await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: user });
  });

  it('two concurrent sweepers run a slot once', async () => {
    const prompt = `concurrent ${Date.now()}`;
    const s = await schedule(user, agentId, { cron: '* * * * *', prompt });
    await Promise.all([runDueSchedules(new Date(s.nextRunAt)), runDueSchedules(new Date(s.nextRunAt))]);
    expect(await listRuns(user.userId, s.id)).toHaveLength(1);
    expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(1);
    expect((await getSchedule(user.userId, agentId, s.id))?.nextRunAt).toBe(plus(s.nextRunAt, minute).toISOString());
    await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: user });
  });

  it('a window missed while nothing ran is served by one run, and the next slot counts from then', async () => {
    const prompt = `missed ${Date.now()}`;
    const s = await schedule(user, agentId, { cron: '* * * * *', prompt });
    const late = plus(s.nextRunAt, 10 * minute + 15_000);
    await runDueSchedules(late);
    const runs = await listRuns(user.userId, s.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.slot).toBe(s.nextRunAt);
    expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(1);
    expect((await getSchedule(user.userId, agentId, s.id))?.nextRunAt).toBe(plus(s.nextRunAt, 11 * minute).toISOString());
    await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: user });
  });

  it('a slot whose sweeper died mid-run (a worker restart) runs again once its lease is over, and only once', async () => {
    const prompt = `restart ${Date.now()}`;
    const s = await schedule(user, agentId, { cron: '* * * * *', prompt });
    const record = (await getSchedule(user.userId, agentId, s.id))!;
    // A sweeper took the slot and died before recording anything.
    expect(await claimRun(user.userId, record, s.nextRunAt, plus(s.nextRunAt, 5 * minute), new Date(s.nextRunAt))).toBe('claimed');
    await runDueSchedules(plus(s.nextRunAt, minute));
    expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(0);
    await Promise.all([runDueSchedules(plus(s.nextRunAt, 6 * minute)), runDueSchedules(plus(s.nextRunAt, 6 * minute))]);
    expect((await listRuns(user.userId, s.id)).map((r) => [r.slot, r.status])).toEqual([[s.nextRunAt, 'succeeded']]);
    expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(1);
    await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: user });
  });

  it('a one-time run goes once into its session, then the schedule is done', async () => {
    const session = await call('POST', '/api/agent', { session: user, body: { action: 'create-session', agentId } });
    const sessionId = session.body.session.id as string;
    const prompt = `once ${Date.now()}`;
    const s = await schedule(user, agentId, { at: new Date(Date.now() + 5 * minute).toISOString(), prompt, sessionId });
    await runDueSchedules(plus(s.nextRunAt, 1000));
    await runDueSchedules(plus(s.nextRunAt, 2 * minute));
    expect((await getSchedule(user.userId, agentId, s.id))?.status).toBe('done');
    const messages = await call('GET', `/api/agent?action=session&sessionId=${sessionId}`, { session: user });
    expect(JSON.stringify(messages.body)).toContain(fakeAnswerTo(prompt));
    expect(await listRuns(user.userId, s.id)).toHaveLength(1);
  });

  it('a reached spending cap skips the run and records why', async () => {
    const prompt = `capped ${Date.now()}`;
    const s = await schedule(user, agentId, { cron: '* * * * *', prompt });
    await call('PUT', '/api/budget', { session: user, body: { monthlyCapUsd: 0.000_000_1 } });
    try {
      await runDueSchedules(new Date(s.nextRunAt));
      const runs = await listRuns(user.userId, s.id);
      expect(runs.map((r) => [r.status, r.reason])).toEqual([['skipped', 'budget']]);
      expect(await answersIn(user.userId, agentId, prompt)).toHaveLength(0);
      const events = (await scheduleEvents(user.userId)).filter((e) => (e.details as { scheduleId?: string })?.scheduleId === s.id);
      expect(events.map((e) => [e.type, e.reason])).toEqual([['schedule.skipped', 'budget']]);
      // A chat with the agent meets the same cap: 402, not a failure of the agent.
      const chat = await call('POST', '/api/chat', { session: user, body: { agentId, message: 'over the cap?' } });
      expect([chat.status, chat.body.code]).toEqual([402, 'BUDGET_EXCEEDED']);
    } finally {
      await call('PUT', '/api/budget', { session: user, body: { monthlyCapUsd: null } });
      await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: user });
    }
  });
});

describe('scheduled prompts: no running instance', () => {
  it('records the run as skipped with the reason and moves on', async () => {
    const owner = await accountSession();
    await storeActiveSubscription(owner.userId, 'solo');
    const agentId = await putTestAgent(owner.userId);
    const s = await schedule(owner, agentId, { cron: '* * * * *', prompt: 'anyone there?' });
    await runDueSchedules(new Date(s.nextRunAt));
    expect((await listRuns(owner.userId, s.id)).map((r) => [r.status, r.reason])).toEqual([['skipped', 'instance-not-running']]);
    expect((await getSchedule(owner.userId, agentId, s.id))?.lastRun).toMatchObject({ status: 'skipped', reason: 'instance-not-running' });
    await call('DELETE', `/api/agents/${agentId}/schedules/${s.id}`, { session: owner });
  });

  it("runs an admin's schedule without a subscription, as the admin's chats are answered", async () => {
    const admin = await accountSession({ admin: true });
    const agentId = await putTestAgent(admin.userId);
    const s = await schedule(admin, agentId, { cron: '* * * * *', prompt: 'who pays?' });
    await runDueSchedules(new Date(s.nextRunAt));
    // Past the subscription check (it used to stop here with `subscription-required`), only the instance is missing.
    expect((await listRuns(admin.userId, s.id)).map((r) => [r.status, r.reason])).toEqual([['skipped', 'instance-not-running']]);
  });
});
