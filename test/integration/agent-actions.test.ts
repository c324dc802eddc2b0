import { describe, expect, it } from 'vitest';
import { runtimeRequest } from '#adapters/launcher';
import { createAgent } from '#data/agents';
import { gatewayToken, getInstance } from '#data/instances';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { accountSession, call, type CallResult, type TestSession, uniqueIp } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { runningAgent as runningAgentOf, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();

/** A subscriber with agents stored directly (no instance): enough for every action but chat. */
async function owner(agentCount = 1) {
  const user = await accountSession();
  await subscribe(user.userId, 'solo');
  const agentIds: string[] = [];
  for (let i = 0; i < agentCount; i++) {
    agentIds.push((await createAgent(user.userId, { name: `Bot ${i}`, model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 10)).id);
  }
  return { user, agentIds };
}

const runningAgent = (plan?: string) => runningAgentOf(bed, plan);

const get = (user: TestSession, query: string) => call('GET', `/api/agent${query}`, { session: user });
const post = (user: TestSession, body: Record<string, unknown>) => call('POST', '/api/agent', { session: user, body, ip: uniqueIp() });
const install = (user: TestSession, skillId: string, agentId: string) =>
  call('POST', '/api/skills', { session: user, body: { skillId, agentId }, ip: uniqueIp() });

describe('GET /api/agent', () => {
  it('lists its actions without one; health reports the agents; unknown or userId parameters are refused', async () => {
    const { user, agentIds } = await owner(2);
    const listing = await get(user, '');
    expect(listing.status).toBe(200);
    expect(listing.body.endpoints.map((e: { method: string; action: string | null }) => `${e.method} ${e.action}`)).toEqual([
      'GET null',
      'GET health',
      'GET sessions',
      'GET session',
      'GET memory',
      'GET skills',
      'GET credentials',
      'POST chat',
      'POST create-session',
      'POST update-skill',
      'POST set-credential',
    ]);
    const health = await get(user, '?action=health');
    expect(health.status).toBe(200);
    // Agents without an instance are not running.
    expect(health.body.status).toBe('unavailable');
    expect(health.body.agents.map((a: { id: string }) => a.id).sort()).toEqual([...agentIds].sort());

    const stranger = await accountSession();
    for (const query of [`?action=health&userId=${stranger.userId}`, `?userId=${stranger.userId}`, '?action=nope', '?action=sessions&limit=0']) {
      const res = await get(user, query);
      expect(res.status, query).toBe(400);
    }
  });

  it("memory needs an owned agent; another user's agent or session is 404 for every action", async () => {
    const { user, agentIds } = await owner();
    const agentId = agentIds[0]!;
    expect((await call('POST', '/api/memory', { session: user, body: { agentId, key: 'venue', memory: { city: 'Berlin' } } })).status).toBe(200);
    const memory = await get(user, `?action=memory&agentId=${agentId}`);
    expect(memory.body).toEqual({ agentId, memory: { venue: { city: 'Berlin' } }, count: 1 });
    expect((await get(user, '?action=memory')).status).toBe(400);
    expect((await get(user, '?action=session')).status).toBe(400);

    const session = (await post(user, { action: 'create-session', agentId })).body.session;
    const stranger = await accountSession();
    for (const action of ['', 'health', 'sessions', 'memory', 'skills', 'credentials']) {
      const res = await get(stranger, `?${action ? `action=${action}&` : ''}agentId=${agentId}`);
      expect(res.status, action).toBe(404);
      expect(res.text).not.toContain(user.userId);
    }
    expect((await get(stranger, `?action=session&sessionId=${session.id}`)).status).toBe(404);
    expect((await get(stranger, `?action=sessions&sessionId=${session.id}`)).status).toBe(404);
  });
});

describe('sessions', () => {
  it('create-session answers 201; sessions list newest first by cursor and filter by agent; session shows its messages', async () => {
    const { user, agentIds } = await owner(2);
    const [a, b] = agentIds as [string, string];
    const created: string[] = [];
    for (const title of ['one', 'two', 'three']) {
      const res = await post(user, { action: 'create-session', agentId: a, title });
      expect(res.status).toBe(201);
      expect(res.body.session).toMatchObject({ agentId: a, title, messageCount: 0 });
      created.push(res.body.session.id);
    }
    const other = await post(user, { action: 'create-session', agentId: b });
    expect(other.body.session.title).toBe('New session');

    const page1 = await get(user, '?action=sessions&limit=2');
    expect(page1.body.sessions.map((s: { id: string }) => s.id)).toEqual([other.body.session.id, created[2]]);
    expect(page1.body.nextCursor).toBe(created[2]);
    const page2 = await get(user, `?action=sessions&limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.sessions.map((s: { id: string }) => s.id)).toEqual([created[1], created[0]]);
    expect(page2.body.nextCursor).toBeNull();

    const ofA = await get(user, `?action=sessions&agentId=${a}&limit=2`);
    expect(ofA.body.sessions.map((s: { id: string }) => s.id)).toEqual([created[2], created[1]]);
    const ofA2 = await get(user, `?action=sessions&agentId=${a}&limit=2&cursor=${ofA.body.nextCursor}`);
    expect(ofA2.body).toEqual({ sessions: [expect.objectContaining({ id: created[0] })], nextCursor: null });

    const one = await get(user, `?action=session&sessionId=${created[0]}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ session: expect.objectContaining({ id: created[0], title: 'one' }), messages: [] });

    const stranger = await owner();
    expect((await post(stranger.user, { action: 'create-session', agentId: a })).status).toBe(404);
    expect((await post(user, { action: 'create-session', agentId: a, userId: stranger.user.userId })).status).toBe(400);
    expect((await get(stranger.user, '?action=sessions')).body).toEqual({ sessions: [], nextCursor: null });
  });
});

describe('update-skill', () => {
  it('enables, disables and configures an installed skill on one agent or all of them; 404 when not installed or not owned', async () => {
    const { user, agentIds } = await owner(2);
    const [a, b] = agentIds as [string, string];
    for (const agentId of [a, b]) expect((await install(user, 'guestlist', agentId)).status).toBe(200);

    const off = await post(user, { action: 'update-skill', skillId: 'guestlist', agentId: a, enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.skills).toEqual([expect.objectContaining({ skillId: 'guestlist', agentId: a, enabled: false, config: {} })]);
    const configured = await post(user, { action: 'update-skill', skillId: 'guestlist', config: { defaultCapacity: 300, doors: '21:00' } });
    expect(configured.body.skills).toHaveLength(2);
    const skills = (await get(user, '?action=skills')).body.skills as { agentId: string; enabled: boolean; config: unknown }[];
    expect(skills.find((s) => s.agentId === a)).toMatchObject({ enabled: false, config: { defaultCapacity: 300, doors: '21:00' } });
    expect(skills.find((s) => s.agentId === b)).toMatchObject({ enabled: true, config: { defaultCapacity: 300, doors: '21:00' } });
    expect((await get(user, `?action=skills&agentId=${b}`)).body.skills).toHaveLength(1);

    expect((await post(user, { action: 'update-skill', skillId: 'guestlist', agentId: a })).status).toBe(400);
    expect((await post(user, { action: 'update-skill', skillId: 'calendar', enabled: true })).status).toBe(404);
    const stranger = await owner();
    expect((await post(stranger.user, { action: 'update-skill', skillId: 'guestlist', agentId: a, enabled: true })).status).toBe(404);
    expect((await post(stranger.user, { action: 'update-skill', skillId: 'guestlist', enabled: true })).status).toBe(404);
    expect((await post(user, { action: 'update-skill', skillId: 'guestlist', enabled: true, userId: stranger.user.userId })).status).toBe(400);
    expect((await get(user, `?action=skills&agentId=${a}`)).body.skills[0].enabled).toBe(false);
  });
});

describe('set-credential', () => {
  it('stores the value encrypted, lists names and previews only, and opens it only for the instance state read', async () => {
    const { user, agentIds } = await owner(2);
    const [a, b] = agentIds as [string, string];
    const value = `sk-live-${'x'.repeat(20)}WXYZ`;
    const responses: CallResult[] = [];
    const set = await post(user, { action: 'set-credential', agentId: a, name: 'TICKETS_API_KEY', value });
    responses.push(set);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ success: true, credential: { agentId: a, name: 'TICKETS_API_KEY', preview: '••••WXYZ', updatedAt: expect.any(String) } });
    responses.push(await post(user, { action: 'set-credential', agentId: b, name: 'SHORT', value: 'abc123' }));
    expect(responses[1]!.body.credential.preview).toBe('••••');

    const listed = await get(user, '?action=credentials');
    responses.push(listed);
    expect(listed.body.credentials.map((c: { agentId: string; name: string }) => `${c.agentId}/${c.name}`).sort()).toEqual(
      [`${a}/TICKETS_API_KEY`, `${b}/SHORT`].sort(),
    );
    responses.push(await get(user, `?action=credentials&agentId=${b}`));
    expect(responses.at(-1)!.body.credentials).toEqual([{ agentId: b, name: 'SHORT', preview: '••••', updatedAt: expect.any(String) }]);

    // Replacing keeps one credential per name.
    responses.push(await post(user, { action: 'set-credential', agentId: a, name: 'TICKETS_API_KEY', value: `${value}2` }));
    expect((await get(user, `?action=credentials&agentId=${a}`)).body.credentials).toHaveLength(1);

    for (const res of responses) {
      expect(res.text).not.toContain(value);
      expect(res.text).not.toContain('abc123');
    }
    const stored = await tenant(user.userId).queryAll(keys.agentCredentialPrefix());
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored)).not.toContain(value);
    expect(JSON.stringify(stored)).not.toContain('abc123');

    // The instance's gateway-token read opens the values; a user session cannot read that route.
    const token = await gatewayToken(user.userId);
    const state = await call('GET', `/api/instance/${user.userId}/runtime/state`, { bearer: token });
    expect(state.status).toBe(200);
    const byId = Object.fromEntries(state.body.agents.map((s: { id: string; credentials: unknown }) => [s.id, s.credentials]));
    expect(byId).toEqual({ [a]: { TICKETS_API_KEY: `${value}2` }, [b]: { SHORT: 'abc123' } });
    expect((await call('GET', `/api/instance/${user.userId}/runtime/state`, { session: user })).status).toBe(401);

    const stranger = await owner();
    expect((await post(stranger.user, { action: 'set-credential', agentId: a, name: 'X', value: 'y' })).status).toBe(404);
    expect((await post(user, { action: 'set-credential', agentId: a, name: 'X', value: 'y', userId: stranger.user.userId })).status).toBe(400);
    expect((await post(user, { action: 'set-credential', agentId: a, name: '1BAD', value: 'y' })).status).toBe(400);
    expect((await get(stranger.user, '?action=credentials')).body.credentials).toEqual([]);
  });
});

describe('chat', () => {
  it('talks to the running instance through the model layer in a session; delivers credentials; 409 once stopped', async () => {
    const { user, agentId } = await runningAgent();
    const first = await post(user, { action: 'chat', agentId, message: 'Draft a setlist for Friday' });
    expect(first.status).toBe(200);
    expect(first.body.message).toMatchObject({ role: 'assistant', content: fakeAnswerTo('Draft a setlist for Friday') });
    expect(first.body.usage.totalTokens).toBeGreaterThan(0);
    const sessionId = first.body.sessionId as string;

    // Without agentId the session's agent answers.
    const second = await post(user, { action: 'chat', sessionId, message: 'and one for Saturday' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ sessionId, message: { content: fakeAnswerTo('and one for Saturday') } });

    const session = await get(user, `?action=session&sessionId=${sessionId}`);
    expect(session.body.session).toMatchObject({ id: sessionId, agentId, title: 'Draft a setlist for Friday', messageCount: 4 });
    expect(session.body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual([
      'user: Draft a setlist for Friday',
      `assistant: ${fakeAnswerTo('Draft a setlist for Friday')}`,
      'user: and one for Saturday',
      `assistant: ${fakeAnswerTo('and one for Saturday')}`,
    ]);
    // The same exchanges are in the agent's history, and both calls were metered.
    expect((await call('GET', `/api/chat?agentId=${agentId}`, { session: user })).body.messages).toHaveLength(4);
    const usage = await tenant(user.userId).queryAll<Record<string, unknown>>(keys.modelUsagePrefix);
    expect(usage).toEqual([expect.objectContaining({ agentId, calls: 2 })]);
    // Each session is its own conversation: the second message was sent with the first exchange as
    // its context; a new session starts fresh, without the other session's turns.
    const modelTurns = (i: number) =>
      (bed.model.requests.at(i)!.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role !== 'system');
    expect(modelTurns(-1).map((m) => m.content)).toEqual(['Draft a setlist for Friday', fakeAnswerTo('Draft a setlist for Friday'), 'and one for Saturday']);
    // Without agentId or sessionId: the caller's newest agent, in a new session.
    const third = await post(user, { action: 'chat', message: 'hello' });
    expect(third.status).toBe(200);
    expect(third.body.sessionId).not.toBe(sessionId);
    expect(modelTurns(-1).map((m) => m.content)).toEqual(['hello']);

    // The running instance reloads and holds the credential (its names are all it shows).
    expect((await post(user, { action: 'set-credential', agentId, name: 'VENUE_API_KEY', value: 'venue-secret-0123456789' })).status).toBe(200);
    const instance = await getInstance(user.userId);
    const held = await runtimeRequest(instance!.handle!.endpoint as string, await gatewayToken(user.userId), `/agents/${agentId}/credentials`);
    expect(held).toEqual({ status: 200, body: { agentId, credentials: ['VENUE_API_KEY'] } });

    const stranger = await owner();
    expect((await post(stranger.user, { action: 'chat', sessionId, message: 'hi' })).status).toBe(404);
    expect((await post(stranger.user, { action: 'chat', agentId, message: 'hi' })).status).toBe(404);
    expect((await post(user, { action: 'chat', sessionId, agentId: stranger.agentIds[0], message: 'hi' })).status).toBe(400);
    expect((await post(user, { action: 'chat', agentId, message: 'hi', userId: stranger.user.userId })).status).toBe(400);

    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    const stopped = await post(user, { action: 'chat', agentId, message: 'anyone there?' });
    expect(stopped.status).toBe(409);
    expect(stopped.body.code).toBe('AGENT_NOT_RUNNING');
    // A refused chat opens no session.
    expect((await get(user, `?action=sessions&agentId=${agentId}`)).body.sessions).toHaveLength(2);
    // One instance start and five chats through it: more than the default budget on a loaded two-core machine.
  }, 60_000);

  it('402 without an active subscription; 404 without any agent', async () => {
    const { user, agentIds } = await owner();
    await subscribe(user.userId, 'solo', 'canceled');
    const res = await post(user, { action: 'chat', agentId: agentIds[0], message: 'hi' });
    expect(res.status).toBe(402);
    const empty = await accountSession();
    expect((await post(empty, { action: 'chat', message: 'hi' })).status).toBe(404);
  });
});
