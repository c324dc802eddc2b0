import { describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { setAgentCredential } from '#data/agent-credentials';
import { getAgent } from '#data/agents';
import { getInstance } from '#data/instances';
import { installSkill, listInstalledSkills, updateInstalledSkill } from '#data/installed-skills';
import { readAgentMemory } from '#data/memory';
import { listSchedules } from '#data/schedules';
import { fileStorage } from '#adapters/file-storage';
import { PLANS } from '#domain/billing/plans';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { chat, drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed({ PROVISION_HEALTH_ATTEMPTS: '150' });

const SECRETS = ['env-secret-value-7001', 'credential-secret-value-7002', 'skill-secret-value-7003'];

async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  expect((await handler(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
}

async function runningAgent(plan = 'solo') {
  const user = await accountSession();
  await subscribe(user.userId, plan);
  const config = { systemPrompt: 'You book tours.', temperature: 0.3, env: { BOOKING_API_KEY: SECRETS[0] } };
  const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Tour Booker', config }, ip: uniqueIp() });
  expect(res.status).toBe(201);
  await provisionerRuns();
  expect((await getInstance(user.userId, true))?.status).toBe('running');
  return { user, agentId: res.body.agent.id as string };
}

async function chatWith(user: TestSession, agentId: string, content: string) {
  const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
  const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
  return chat(`${websocketUrl}?token=${token}`, content);
}

/** The system prompt the running agent last sent the model. */
const lastSystemPrompt = () => bed.model.requests.at(-1)!.body.messages[0]!.content as string;

const writeMemory = (user: TestSession, agentId: string, memory: Record<string, unknown>) =>
  call('POST', '/api/memory', { session: user, body: { agentId, memory } });

const checkpoint = (user: TestSession, agentId: string, name: string) => call('POST', `/api/agents/${agentId}/checkpoints`, { session: user, body: { name } });

const memoryOf = async (userId: string, agentId: string) => (await readAgentMemory(userId, agentId))?.memory;

describe('checkpoints, rewind and clone', () => {
  it('rewind puts memory and configuration back key by key, keeps secrets out of the snapshot, and the running agent answers from it', async () => {
    const { user, agentId } = await runningAgent();
    await installSkill(user.userId, agentId, 'calendar', 10);
    await updateInstalledSkill(user.userId, agentId, 'calendar', { config: { calendarId: 'tours', apiKey: SECRETS[2] } });
    await setAgentCredential(user.userId, agentId, 'TICKETING_TOKEN', SECRETS[1]!);
    const before = { venue: { name: 'Paradiso', capacity: 1500 }, tour: ['AMS', 'BER'], fee: 5000 };
    expect((await call('POST', '/api/memory', { session: user, body: { agentId, memory: before } })).status).toBe(200);
    const configBefore = (await getAgent(user.userId, agentId, true))!.config;

    const taken = await checkpoint(user, agentId, 'Before the rewrite');
    expect(taken.status).toBe(201);
    expect(taken.body.checkpoint).toMatchObject({ kind: 'named', name: 'Before the rewrite', contents: { memoryKeys: 3, skills: 1 } });
    const stored = (await fileStorage().get(`checkpoints/${user.userId}/${taken.body.checkpoint.id}`))!.toString('utf8');
    for (const secret of SECRETS) expect(stored).not.toContain(secret);

    expect((await writeMemory(user, agentId, { venue: 'The Fleece', added_later: true })).status).toBe(200);
    const put = await call('PUT', `/api/agents/${agentId}/config`, {
      session: user,
      body: { systemPrompt: 'You sell merch.', env: { BOOKING_API_KEY: SECRETS[0], OTHER: 'x' } },
    });
    expect(put.status).toBe(200);
    await updateInstalledSkill(user.userId, agentId, 'calendar', { enabled: false, config: { calendarId: 'merch', apiKey: SECRETS[2] } });
    await chatWith(user, agentId, 'hello');
    expect(lastSystemPrompt()).toContain('added_later');

    const rewind = await call('POST', `/api/agents/${agentId}/checkpoints/${taken.body.checkpoint.id}/rewind`, { session: user });
    expect(rewind.status).toBe(200);
    expect(rewind.body).toMatchObject({ success: true, instanceTold: true, restored: { memoryKeys: 3, memoryKeysRemoved: 1, skills: 1 } });
    expect(rewind.body.undoCheckpointId).toMatch(/^ckp_/);

    const after = (await memoryOf(user.userId, agentId))!;
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const key of Object.keys(before)) expect(after[key], key).toEqual((before as Record<string, unknown>)[key]);
    expect((await getAgent(user.userId, agentId, true))!.config).toEqual(configBefore);
    const [calendar] = await listInstalledSkills(user.userId, agentId, true);
    expect(calendar).toMatchObject({ enabled: true, config: { calendarId: 'tours', apiKey: SECRETS[2] } });

    await chatWith(user, agentId, 'where do I play?');
    expect(lastSystemPrompt()).toContain('"Paradiso"');
    expect(lastSystemPrompt()).not.toContain('added_later');
    expect(lastSystemPrompt()).toContain('You book tours.');

    // The state before the rewind is itself a checkpoint: rewinding to it brings the later write back.
    const undo = await call('POST', `/api/agents/${agentId}/checkpoints/${rewind.body.undoCheckpointId}/rewind`, { session: user });
    expect(undo.status).toBe(200);
    expect((await memoryOf(user.userId, agentId))!.added_later).toBe(true);
  });

  it('the automatic checkpoint before reset-memory restores what the reset removed; a bulk write takes one too', async () => {
    const { user, agentId } = await runningAgent();
    expect((await writeMemory(user, agentId, { home_venue: 'Thekla', fee: 5000 })).status).toBe(200);
    const reset = await call('POST', `/api/instance/${user.userId}/reset-memory`, { session: user, ip: uniqueIp() });
    expect(reset.status).toBe(200);
    expect(await memoryOf(user.userId, agentId)).toEqual({});

    const list = await call('GET', `/api/agents/${agentId}/checkpoints`, { session: user });
    expect(list.status).toBe(200);
    const reasons = list.body.checkpoints.map((c: { reason?: string }) => c.reason);
    expect(reasons).toEqual(['reset-memory', 'memory-write']);
    const auto = list.body.checkpoints[0];
    expect(auto.kind).toBe('auto');
    expect(new Date(auto.expiresAt).getTime() - new Date(auto.createdAt).getTime()).toBe(7 * 86_400_000);
    expect(list.body.limits.named).toEqual({ current: 0, limit: PLANS.solo.checkpoints });

    const rewind = await call('POST', `/api/agents/${agentId}/checkpoints/${auto.id}/rewind`, { session: user });
    expect(rewind.status).toBe(200);
    expect(await memoryOf(user.userId, agentId)).toEqual({ home_venue: 'Thekla', fee: 5000 });
    expect((await getAgent(user.userId, agentId, true))!.historyResetAt).toBeUndefined();
  });

  it('clone makes a new agent in the account with the same memory, skills and schedules', async () => {
    const { user, agentId } = await runningAgent();
    await writeMemory(user, agentId, { venue: 'Paradiso', tour: ['AMS'] });
    await installSkill(user.userId, agentId, 'calendar', 10);
    await updateInstalledSkill(user.userId, agentId, 'calendar', { config: { calendarId: 'tours' } });
    expect((await call('POST', `/api/agents/${agentId}/schedules`, { session: user, body: { cron: '0 9 * * 1-5', prompt: 'Morning summary' } })).status).toBe(
      201,
    );
    const taken = await checkpoint(user, agentId, 'Golden');
    const described = await call('GET', `/api/agents/${agentId}/checkpoints/${taken.body.checkpoint.id}`, { session: user });
    expect(described.status).toBe(200);
    expect(described.body.snapshot.memoryKeys.sort()).toEqual(['tour', 'venue']);
    expect(described.body.snapshot.secrets.env).toEqual(['BOOKING_API_KEY']);

    const clone = await call('POST', `/api/agents/${agentId}/checkpoints/${taken.body.checkpoint.id}/clone`, { session: user, body: {}, ip: uniqueIp() });
    expect(clone.status).toBe(201);
    expect(clone.body.agent.name).toBe('Tour Booker (copy)');
    const copy = clone.body.agent.id as string;
    expect(copy).not.toBe(agentId);
    expect(await memoryOf(user.userId, copy)).toEqual({ venue: 'Paradiso', tour: ['AMS'] });
    expect((await listInstalledSkills(user.userId, copy, true)).map((s) => [s.skillId, s.config])).toEqual([['calendar', { calendarId: 'tours' }]]);
    expect((await listSchedules(user.userId, copy)).map((s) => [s.cron, s.prompt])).toEqual([['0 9 * * 1-5', 'Morning summary']]);
  });

  it('the plan bounds the named checkpoints: 429 with current and limit; a delete frees one; automatic ones do not count', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'label');
    const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Small' }, ip: uniqueIp() });
    const agentId = res.body.agent.id as string;
    const limit = PLANS.label.checkpoints;
    const ids: string[] = [];
    for (let i = 0; i < limit; i += 1) ids.push((await checkpoint(user, agentId, `n${i}`)).body.checkpoint.id);
    await writeMemory(user, agentId, { a: 1 });
    const refused = await checkpoint(user, agentId, 'one too many');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'CHECKPOINT_LIMIT_REACHED', current: limit, limit });
    expect((await call('DELETE', `/api/agents/${agentId}/checkpoints/${ids[0]}`, { session: user })).status).toBe(200);
    expect(await fileStorage().get(`checkpoints/${user.userId}/${ids[0]}`)).toBeUndefined();
    expect((await call('GET', `/api/agents/${agentId}/checkpoints/${ids[0]}`, { session: user })).status).toBe(404);
    expect((await checkpoint(user, agentId, 'fits again')).status).toBe(201);

    const big = 'x'.repeat(90 * 1024);
    for (let batch = 0; batch < 3; batch += 1) {
      const memory = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`big_${batch}_${i}`, big]));
      expect((await writeMemory(user, agentId, memory)).status).toBe(200);
    }
    const tooLarge = await checkpoint(user, agentId, 'too large');
    expect(tooLarge.status).toBe(429);
    expect(tooLarge.body).toMatchObject({ code: 'CHECKPOINT_TOO_LARGE', limit: PLANS.label.checkpointMaxBytes });
    expect(tooLarge.body.current).toBeGreaterThan(PLANS.label.checkpointMaxBytes);
  });

  it('another account reaches no checkpoint route of an agent it does not own', async () => {
    const { user, agentId } = await runningAgent();
    const taken = await checkpoint(user, agentId, 'Mine');
    const id = taken.body.checkpoint.id as string;
    const other = await accountSession();
    await subscribe(other.userId);
    const base = `/api/agents/${agentId}/checkpoints`;
    const attempts: [string, string, unknown?][] = [
      ['GET', base],
      ['POST', base, { name: 'theirs' }],
      ['GET', `${base}/${id}`],
      ['DELETE', `${base}/${id}`],
      ['POST', `${base}/${id}/rewind`],
      ['POST', `${base}/${id}/clone`, {}],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(method, path, { session: other, ...(body ? { body } : {}), ip: uniqueIp() });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call('GET', `${base}/${id}`, { session: user })).status).toBe(200);
    expect((await call('GET', '/api/agents/provision', { session: other })).body.count).toBe(0);
  });
});
