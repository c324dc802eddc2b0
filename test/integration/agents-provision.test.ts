import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { agentQuotaUsed, readPlatformCounters } from '#data/agents';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, testSession, uniqueIp } from '../helpers/api';
import { drain, privateQueue, subscribe } from './agents-helpers';

let queueUrl: string;
const originalQueue = process.env.PROVISIONING_QUEUE_URL;

beforeAll(async () => {
  queueUrl = await privateQueue();
  reloadConfig({ PROVISIONING_QUEUE_URL: queueUrl });
});
afterAll(() => {
  reloadConfig({ PROVISIONING_QUEUE_URL: originalQueue });
});

const provision = (session: Awaited<ReturnType<typeof testSession>>, body: unknown = { name: 'Booking bot' }) =>
  call('POST', '/api/agents/provision', { session, body, ip: uniqueIp() });

describe('POST /api/agents/provision', () => {
  it('refuses an account without an active subscription with 402, and creates nothing', async () => {
    const user = await testSession();
    const res = await provision(user);
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('SUBSCRIPTION_REQUIRED');
    await subscribe(user.userId, 'solo', 'canceled');
    expect((await provision(user)).status).toBe(402);
    expect((await call('GET', '/api/agents', { session: user })).body.count).toBe(0);
    expect(await agentQuotaUsed(user.userId)).toBe(0);
  });

  it('refuses the retired free plan with 402 PLAN_REQUIRED', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'free');
    const res = await provision(user);
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('PLAN_REQUIRED');
  });

  it('creates the agent in provisioning, answers 201 with the spec body and queues its launch', async () => {
    const user = await testSession();
    await subscribe(user.userId);
    await drain(queueUrl);
    const res = await provision(user, { name: '  Tour Booking Assistant ', model: 'anthropic/claude-3-5-haiku', config: { temperature: 0.2 } });
    expect(res.status).toBe(201);
    const agent = res.body.agent;
    expect(res.body.success).toBe(true);
    expect(Object.keys(agent).sort()).toEqual(['createdAt', 'id', 'model', 'name', 'status', 'websocketUrl']);
    expect(agent).toMatchObject({ name: 'Tour Booking Assistant', status: 'provisioning', model: 'anthropic/claude-3-5-haiku' });
    expect(agent.websocketUrl).toMatch(new RegExp(`^wss://agent-[0-9a-f]{16}\\.agents\\.localhost/agents/${agent.id}$`));
    expect(Date.parse(agent.createdAt)).not.toBeNaN();
    expect(await drain(queueUrl)).toEqual([{ kind: 'agent', userId: user.userId, agentId: agent.id, ownerEmail: user.email }]);

    const detail = await call('GET', `/api/agents/${agent.id}`, { session: user });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      status: 'ok',
      agent: {
        id: agent.id,
        status: 'provisioning',
        plan: 'solo',
        startedAt: null,
        verified: false,
        verificationType: null,
        attestationUid: null,
        verifiedAt: null,
      },
    });
    expect(detail.body.agent.url).toMatch(/^https:\/\/agent-[0-9a-f]{16}\.agents\.localhost$/);
    expect((await call('GET', `/api/agents/${agent.id}/config`, { session: user })).body).toEqual({ config: { temperature: 0.2 } });
  });

  it('takes a custom model from config.model, which is then required', async () => {
    const user = await testSession();
    await subscribe(user.userId);
    const missing = await provision(user, { name: 'x', model: 'custom' });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.issues)).toContain('config.model');
    const ok = await provision(user, { name: 'x', model: 'custom', config: { model: 'mistral/mistral-small' } });
    expect(ok.status).toBe(201);
    expect(ok.body.agent.model).toBe('mistral/mistral-small');
  });

  it('needs a name and refuses unknown fields such as plan', async () => {
    const user = await testSession();
    await subscribe(user.userId);
    expect((await provision(user, {})).status).toBe(400);
    expect((await provision(user, { name: '   ' })).status).toBe(400);
    const smuggled = await provision(user, { name: 'x', plan: 'network' });
    expect(smuggled.status).toBe(400);
    expect(await agentQuotaUsed(user.userId)).toBe(0);
  });

  it('50 concurrent requests against a limit of 3 create exactly 3 agents; the rest get 429 with current and limit', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    const before = await readPlatformCounters();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => provision(user, { name: `agent ${i}`, tier: 'enterprise' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(47);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(r.body).toMatchObject({ code: 'AGENT_LIMIT_REACHED', current: 3, limit: 3 });
      expect(typeof r.body.error).toBe('string');
    }
    const list = await call('GET', '/api/agents', { session: user });
    expect(list.body.count).toBe(3);
    expect(await agentQuotaUsed(user.userId)).toBe(3);
    const after = await readPlatformCounters();
    // Other tests run alongside; these three at least were counted.
    expect(after.agents.total - before.agents.total).toBeGreaterThanOrEqual(3);
  });

  it('the limit comes from the stored plan, never from the body tier; admins get the elevated limit without a subscription', async () => {
    const label = await testSession();
    await subscribe(label.userId, 'label');
    expect((await provision(label, { name: 'one', tier: 'enterprise' })).status).toBe(201);
    const second = await provision(label, { name: 'two', tier: 'enterprise' });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ current: 1, limit: 1 });

    const admin = await testSession({ admin: true, userId: `u_admin_${Date.now()}` });
    const res = await Promise.all([1, 2, 3, 4].map((i) => provision(admin, { name: `admin ${i}` })));
    expect(res.map((r) => r.status)).toEqual([201, 201, 201, 201]);
  });

  it('gives the quota back and answers 502 when the launch cannot be queued', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'label');
    reloadConfig({ PROVISIONING_QUEUE_URL: `${queueUrl}-does-not-exist` });
    try {
      const res = await provision(user);
      expect(res.status).toBe(502);
    } finally {
      reloadConfig({ PROVISIONING_QUEUE_URL: queueUrl });
    }
    expect(await agentQuotaUsed(user.userId)).toBe(0);
    const [agent] = (await call('GET', '/api/agents', { session: user })).body.agents;
    expect(agent.status).toBe('error');
    expect((await provision(user)).status).toBe(201);
  });
});

describe('reading agents', () => {
  it('GET /api/agents without a session is an empty list, not 401; a bad token is still 401', async () => {
    const res = await call('GET', '/api/agents', { ip: uniqueIp() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ agents: [], count: 0, status: 'ok' });
    expect((await call('GET', '/api/agents', { bearer: 'not-a-token', ip: uniqueIp() })).status).toBe(401);
  });

  it("lists only the caller's agents, newest first, in both list views", async () => {
    const user = await testSession();
    const other = await testSession();
    await subscribe(user.userId, 'collective');
    await subscribe(other.userId);
    const a = (await provision(user, { name: 'first' })).body.agent;
    const b = (await provision(user, { name: 'second' })).body.agent;
    await provision(other, { name: 'not yours' });
    const list = await call('GET', '/api/agents', { session: user });
    expect(list.body.agents.map((x: { id: string }) => x.id).sort()).toEqual([a.id, b.id].sort());
    for (const item of list.body.agents) expect(Object.keys(item).sort()).toEqual(['createdAt', 'id', 'model', 'name', 'status', 'updatedAt', 'websocketUrl']);
    const prov = await call('GET', '/api/agents/provision', { session: user });
    expect(prov.body).toMatchObject({ success: true, count: 2 });
  });

  it("answers a missing agent and another user's agent with the same 404, without data", async () => {
    const owner = await testSession();
    const intruder = await testSession();
    await subscribe(owner.userId);
    const agent = (await provision(owner, { name: 'secret name' })).body.agent;
    const theirs = await call('GET', `/api/agents/${agent.id}`, { session: intruder });
    const missing = await call('GET', '/api/agents/agt_does_not_exist', { session: intruder });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(missing.body);
    expect(theirs.text).not.toContain('secret name');
    const stored = await tenant(owner.userId).get(keys.agent(owner.userId, agent.id));
    expect(stored?.name).toBe('secret name');
  });
});
