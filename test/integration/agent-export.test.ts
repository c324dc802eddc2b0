import { beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { AGENT_EXPORT_VERSION } from '#contract/autonomy';
import { setAgentCredential } from '#data/agent-credentials';
import { appendExchange } from '#data/agents';
import { installSkill, listInstalledSkills, updateInstalledSkill } from '#data/installed-skills';
import { readAgentMemory, writeAgentMemory } from '#data/memory';
import { listSchedules } from '#data/schedules';
import { encodeEntry } from '#domain/memory/limits';
import { accountSession, call, storeActiveSubscription, type TestSession, uniqueIp } from '../helpers/api';
import { privateQueue } from './agents-helpers';

const SECRETS = ['env-secret-value-0001', 'credential-secret-value-0002', 'skill-secret-value-0003'];

async function subscriber(plan = 'solo'): Promise<TestSession> {
  const session = await accountSession();
  await storeActiveSubscription(session.userId, plan);
  return session;
}

async function provision(owner: TestSession, config: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/agents/provision', { session: owner, body: { name: 'Tour Booker', config }, ip: uniqueIp() });
  if (res.status !== 201) throw new Error(`could not provision: ${res.status} ${res.text}`);
  return res.body.agent.id as string;
}

/** An agent with memory, two skills (one setting a secret), schedules, an env secret, a credential and some history. */
async function richAgent(owner: TestSession) {
  const agentId = await provision(owner, { systemPrompt: 'You book tours.', temperature: 0.3, env: { BOOKING_API_KEY: SECRETS[0] } });
  await writeAgentMemory(owner.userId, agentId, [encodeEntry('venue', { name: 'Paradiso', capacity: 1500 }), encodeEntry('tour', ['AMS', 'BER'])]);
  await installSkill(owner.userId, agentId, 'calendar', 10);
  await updateInstalledSkill(owner.userId, agentId, 'calendar', { config: { calendarId: 'tours', apiKey: SECRETS[2] } });
  await installSkill(owner.userId, agentId, 'notes-workspace', 10);
  await updateInstalledSkill(owner.userId, agentId, 'notes-workspace', { enabled: false });
  await setAgentCredential(owner.userId, agentId, 'TICKETING_TOKEN', SECRETS[1]!);
  for (const body of [
    { cron: '0 9 * * 1-5', prompt: 'Morning summary' },
    { at: new Date(Date.now() + 86_400_000).toISOString(), prompt: 'Remind me tomorrow' },
  ])
    expect((await call('POST', `/api/agents/${agentId}/schedules`, { session: owner, body })).status).toBe(201);
  await appendExchange(owner.userId, agentId, {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello there' },
    ],
  });
  return agentId;
}

describe('agent export and import', () => {
  beforeAll(async () => {
    reloadConfig({ PROVISIONING_QUEUE_URL: await privateQueue() });
  });

  it('round trip: another account gets the same memory, skills and schedules; no secret value anywhere in the export', async () => {
    const owner = await subscriber();
    const agentId = await richAgent(owner);
    const exported = await call('GET', `/api/agents/${agentId}/export?history=true`, { session: owner });
    expect(exported.status).toBe(200);
    const text = JSON.stringify(exported.body);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).not.toContain(SECRETS[1]!.slice(-4));
    expect(exported.body).toMatchObject({ format: 'agent-platform/agent', formatVersion: AGENT_EXPORT_VERSION });
    expect(exported.body.secrets).toEqual({
      env: ['BOOKING_API_KEY'],
      credentials: ['TICKETING_TOKEN'],
      skillSettings: [{ skillId: 'calendar', field: 'apiKey' }],
    });
    expect(exported.body.agent.config).toEqual({ systemPrompt: 'You book tours.', temperature: 0.3 });
    expect(exported.body.history.map((m: { content: string }) => m.content)).toEqual(['hi', 'hello there']);
    expect((await call('GET', `/api/agents/${agentId}/export`, { session: owner })).body.history).toBeUndefined();

    const other = await subscriber();
    const imported = await call('POST', '/api/agents/import', { session: other, body: exported.body, ip: uniqueIp() });
    expect(imported.status).toBe(201);
    expect(imported.body.imported).toEqual({ memoryKeys: 2, skills: 2, schedules: 2 });
    expect(imported.body.secretsToEnter.env).toEqual(['BOOKING_API_KEY']);
    const copy = imported.body.agent.id as string;
    expect(copy).not.toBe(agentId);

    expect((await readAgentMemory(other.userId, copy))?.memory).toEqual((await readAgentMemory(owner.userId, agentId))?.memory);
    const skillsOf = async (userId: string, id: string) =>
      (await listInstalledSkills(userId, id, true))
        .map(({ skillId, enabled, config }) => ({ skillId, enabled, config }))
        .sort((a, b) => a.skillId.localeCompare(b.skillId));
    expect(await skillsOf(other.userId, copy)).toEqual([
      { skillId: 'calendar', enabled: true, config: { calendarId: 'tours' } },
      { skillId: 'notes-workspace', enabled: false, config: {} },
    ]);
    const schedulesOf = async (userId: string, id: string) =>
      (await listSchedules(userId, id))
        .map(({ cron, at, prompt, status, nextRunAt }) => ({ cron, at, prompt, status, nextRunAt }))
        .sort((a, b) => a.prompt.localeCompare(b.prompt));
    expect(await schedulesOf(other.userId, copy)).toEqual(await schedulesOf(owner.userId, agentId));
    const again = await call('GET', `/api/agents/${copy}/export`, { session: other });
    const byPrompt = (list: { prompt: string }[]) => [...list].sort((a, b) => a.prompt.localeCompare(b.prompt));
    for (const part of ['agent', 'memory', 'skills'] as const) expect(again.body[part], part).toEqual(exported.body[part]);
    expect(byPrompt(again.body.schedules)).toEqual(byPrompt(exported.body.schedules));
    // The owner's agent is not the other account's to export.
    expect((await call('GET', `/api/agents/${agentId}/export`, { session: other })).status).toBe(404);
  });

  it('refuses a newer format version, a broken document, unknown skills and the plan limits, writing nothing', async () => {
    const owner = await subscriber();
    const agentId = await provision(owner);
    const doc = (await call('GET', `/api/agents/${agentId}/export`, { session: owner })).body;
    const importer = await subscriber('label');
    const post = (body: unknown) => call('POST', '/api/agents/import', { session: importer, body, ip: uniqueIp() });

    const newer = await post({ ...doc, formatVersion: AGENT_EXPORT_VERSION + 1, someNewField: true });
    expect(newer.status).toBe(400);
    expect(newer.body.code).toBe('EXPORT_VERSION_UNSUPPORTED');
    expect((await post({ ...doc, memory: 'not an object' })).body.code).toBe('INVALID_EXPORT');
    expect((await post({ ...doc, skills: [{ skillId: 'no-such-skill', enabled: true, config: {} }] })).body.code).toBe('UNKNOWN_SKILL');
    const skills = ['calendar', 'email', 'webhook', 'browser'].map((skillId) => ({ skillId, enabled: true, config: {} }));
    const tooMany = await post({ ...doc, skills });
    expect(tooMany.status).toBe(429);
    expect(tooMany.body.code).toBe('SKILL_LIMIT_REACHED');
    expect((await call('GET', '/api/agents', { session: importer })).body.count).toBe(0);
    // The label plan allows one agent: the first import takes it, the second is refused by the agent limit.
    expect((await post(doc)).status).toBe(201);
    const second = await post(doc);
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('AGENT_LIMIT_REACHED');
  });
});

describe('agent import keeps the memory key rules', () => {
  beforeAll(async () => {
    reloadConfig({ PROVISIONING_QUEUE_URL: await privateQueue() });
  });

  const documentWith = (memoryJson: string) =>
    `{"format":"agent-platform/agent","formatVersion":${AGENT_EXPORT_VERSION},"exportedAt":"2026-01-01T00:00:00.000Z",` +
    `"agent":{"name":"Imported","model":"openai/gpt-4o-mini","config":{}},"memory":${memoryJson},` +
    `"skills":[],"schedules":[],"secrets":{"env":[],"credentials":[],"skillSettings":[]}}`;

  it('refuses empty keys, keys with unpaired surrogates and __proto__ with 400, writing nothing', async () => {
    const owner = await subscriber();
    for (const memory of ['{"":1}', '{"a\\ud800":1,"a\\udc00":2}', '{"__proto__":{"venue":"Paradiso"}}']) {
      const res = await call('POST', '/api/agents/import', { session: owner, rawBody: documentWith(memory), ip: uniqueIp() });
      expect(res.status, memory).toBe(400);
      expect(res.body.code, memory).toBe('INVALID_EXPORT');
    }
    expect((await call('GET', '/api/agents', { session: owner })).body.agents ?? []).toEqual([]);
  });

  it('counts the keys it wrote', async () => {
    const owner = await subscriber();
    const res = await call('POST', '/api/agents/import', { session: owner, rawBody: documentWith('{"venue":"Paradiso","tour":["AMS"]}'), ip: uniqueIp() });
    expect(res.status, res.text).toBe(201);
    expect(res.body.imported.memoryKeys).toBe(2);
    expect(Object.keys((await readAgentMemory(owner.userId, res.body.agent.id))?.memory ?? {}).sort()).toEqual(['tour', 'venue']);
  });
});
