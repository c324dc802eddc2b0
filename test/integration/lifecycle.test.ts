import { afterEach, describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { reloadConfig } from '#platform/config';
import { getInstance } from '#data/instances';
import * as keys from '#data/keys';
import { readAgentMemory, writeAgentMemory } from '#data/memory';
import { tenant } from '#data/tenant';
import { call, accountSession, uniqueIp, type TestSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { chat, drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed({
  PROVISION_HEALTH_ATTEMPTS: '150',
  APPROVED_RUNTIME_IMAGES: 'registry.example/runtime:2,registry.example/broken:1',
});

afterEach(() => {
  bed.launcher.breakImage(undefined);
  reloadConfig({ PROVISION_HEALTH_ATTEMPTS: '150', PROVISIONING_QUEUE_URL: bed.queueUrl });
});

/** Runs the provisioner on every message queued so far (this file's own queue), as the event source would. */
async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  const out = await handler(sqsEvent(...messages.map((m) => sqsRecord(m))));
  expect(out.batchItemFailures).toEqual([]);
  return messages;
}

async function runningInstance() {
  const user = await accountSession();
  await subscribe(user.userId);
  const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Lifecycle bot' }, ip: uniqueIp() });
  expect(res.status).toBe(201);
  await provisionerRuns();
  expect((await getInstance(user.userId, true))?.status).toBe('running');
  return { user, agentId: res.body.agent.id as string };
}

const lifecycle = (user: TestSession, op: string, body?: unknown, asUser = user) =>
  call('POST', `/api/instance/${user.userId}/${op}`, { session: asUser, body, ip: uniqueIp() });
const instanceOf = async (user: TestSession) => (await call('GET', `/api/instance/${user.userId}`, { session: user, ip: uniqueIp() })).body;

async function chatWith(user: TestSession, agentId: string, content: string) {
  const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
  const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
  return chat(`${websocketUrl}?token=${token}`, content);
}

describe('instance lifecycle', () => {
  it('20 concurrent starts on a stopped instance launch it once; every call answers 200 with the same operation', async () => {
    const { user } = await runningInstance();
    expect((await lifecycle(user, 'stop')).body).toMatchObject({ success: true, status: 'stopped', current: 'stopped' });
    await provisionerRuns();
    const launchesBefore = bed.launcher.launchesFor(user.userId).length;

    const results = await Promise.all(Array.from({ length: 20 }, () => lifecycle(user, 'start')));
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, status: 'running', current: 'provisioning' });
    }
    expect(new Set(results.map((r) => r.body.operationId)).size).toBe(1);

    const queued = await provisionerRuns();
    expect(queued).toHaveLength(1);
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(launchesBefore + 1);
    expect((await instanceOf(user)).status).toBe('running');
    expect(await bed.launcher.aliveFor(user.userId)).toHaveLength(1);
  });

  it('accepts every operation from every state; one that finds the instance where it leads changes nothing', async () => {
    const { user } = await runningInstance();
    const running = (await getInstance(user.userId, true))!;
    const again = await lifecycle(user, 'start');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, status: 'running', current: 'running', operationId: running.operationId });
    expect(await drain(bed.queueUrl)).toEqual([]);

    await lifecycle(user, 'stop');
    await provisionerRuns();
    expect((await lifecycle(user, 'stop')).body).toMatchObject({ success: true, status: 'stopped', current: 'stopped' });
    expect(await drain(bed.queueUrl)).toEqual([]);
    const restarted = await lifecycle(user, 'restart');
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ success: true, status: 'running', current: 'provisioning' });
    await provisionerRuns();
    expect((await instanceOf(user)).status).toBe('running');

    await lifecycle(user, 'stop');
    await provisionerRuns();
    expect((await lifecycle(user, 'repair')).body).toMatchObject({ success: true, status: 'provisioning', current: 'provisioning' });
    await provisionerRuns();
    expect((await instanceOf(user)).status).toBe('running');
    expect(await bed.launcher.aliveFor(user.userId)).toHaveLength(1);
  });

  it('start then restart at once: both 200, the restart supersedes the start and the instance ends running on one process', async () => {
    const { user } = await runningInstance();
    await lifecycle(user, 'stop');
    await provisionerRuns();
    const started = await lifecycle(user, 'start');
    const restarted = await lifecycle(user, 'restart');
    expect(started.status).toBe(200);
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ success: true, status: 'running', current: 'provisioning' });
    expect(restarted.body.operationId).not.toBe(started.body.operationId);
    for (const op of ['update', 'repair', 'reset-memory']) expect((await lifecycle(user, op)).status).toBe(200);
    await provisionerRuns();
    const after = (await getInstance(user.userId, true))!;
    expect(after.status).toBe('running');
    expect(after.op).toBe('reset-memory');
    expect(await bed.launcher.aliveFor(user.userId)).toEqual([expect.objectContaining({ id: after.handle!.id })]);
  });

  it('mixed concurrent start / stop / restart races settle where the last written operation leads', async () => {
    const { user } = await runningInstance();
    for (let round = 0; round < 3; round += 1) {
      const ops = Array.from({ length: 9 }, (_, i) => ['start', 'stop', 'restart'][(i + round) % 3]!);
      const results = await Promise.all(ops.map((op) => lifecycle(user, op)));
      for (const r of results) expect(r.status).toBe(200);
      const last = (await getInstance(user.userId, true))!;
      // The operation id the instance holds is one a caller was answered with: the last accepted one.
      expect(results.map((r) => r.body.operationId)).toContain(last.operationId);
      await provisionerRuns();
      const settled = (await getInstance(user.userId, true))!;
      expect(settled.generation).toBe(last.generation);
      const alive = await bed.launcher.aliveFor(user.userId);
      if (last.op === 'stop') {
        expect(settled.status).toBe('stopped');
        expect(alive).toEqual([]);
      } else {
        expect(settled.status).toBe('running');
        expect(alive.map((h) => h.id)).toEqual([settled.handle!.id]);
      }
    }
  });

  it("refuses another user's instance with 403 {success: false, status: error} on every route, changing and revealing nothing", async () => {
    const { user } = await runningInstance();
    const intruder = await accountSession();
    for (const op of ['start', 'stop', 'restart', 'update', 'repair', 'reset-memory']) {
      const res = await lifecycle(user, op, undefined, intruder);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, status: 'error' });
    }
    for (const suffix of ['', '/stats', '/token']) {
      const res = await call('GET', `/api/instance/${user.userId}${suffix}`, { session: intruder, ip: uniqueIp() });
      expect(res.status).toBe(403);
      expect(res.text).not.toContain('gw_');
      expect(res.text).not.toContain(user.email);
    }
    expect((await instanceOf(user)).status).toBe('running');
    expect(await drain(bed.queueUrl)).toEqual([]);
  });

  it('answers 404 while the account has no instance', async () => {
    const user = await accountSession();
    for (const op of ['start', 'stop', 'restart', 'update', 'repair', 'reset-memory']) {
      const res = await lifecycle(user, op);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, status: 'error' });
    }
    expect((await call('GET', `/api/instance/${user.userId}`, { session: user, ip: uniqueIp() })).status).toBe(404);
  });

  it('stop stops the process; start launches a new one that answers with the same token', async () => {
    const { user, agentId } = await runningInstance();
    const before = (await getInstance(user.userId, true))!.handle!;
    await lifecycle(user, 'stop');
    await provisionerRuns();
    await expect(fetch(`${before.endpoint}/health`)).rejects.toThrow();
    expect((await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent.status).toBe('stopped');
    const stats = await call('GET', `/api/instance/${user.userId}/stats`, { session: user, ip: uniqueIp() });
    expect(stats.body).toMatchObject({ status: 'stopped', cpu: '0.00%', memory: '0B' });

    await lifecycle(user, 'start');
    await provisionerRuns();
    const after = (await getInstance(user.userId, true))!;
    expect(after.status).toBe('running');
    expect(after.handle!.id).not.toBe(before.id);
    const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
    expect((await fetch(`${after.handle!.endpoint}/health`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${after.handle!.endpoint}/health`, { headers: { authorization: 'Bearer gw_wrong' } })).status).toBe(401);
  });

  it('restart relaunches with memory and history delivered again, so nothing is lost', async () => {
    const { user, agentId } = await runningInstance();
    await writeAgentMemory(user.userId, agentId, [{ key: 'home_venue', encoded: JSON.stringify('The Fleece'), bytes: 12 }]);
    await chatWith(user, agentId, 'first question');
    expect((await lifecycle(user, 'restart')).body).toMatchObject({ success: true, status: 'running', current: 'provisioning' });
    expect((await instanceOf(user)).status).toBe('provisioning');
    await provisionerRuns();
    const answer = await chatWith(user, agentId, 'second question');
    expect(answer.content).toBe(fakeAnswerTo('second question'));
    const sent = bed.model.requests.at(-1)!.body.messages;
    expect(sent[0]!.content).toContain('home_venue: "The Fleece"');
    expect(sent.slice(1).map((m) => m.content)).toEqual(['first question', fakeAnswerTo('first question'), 'second question']);
  });

  it('reset-memory wipes the stored memory and restarts a running instance without it', async () => {
    const { user, agentId } = await runningInstance();
    await writeAgentMemory(user.userId, agentId, [{ key: 'secret_fee', encoded: '5000', bytes: 4 }]);
    const res = await lifecycle(user, 'reset-memory');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: 'provisioning' });
    expect(res.body.message).toContain('1 key');
    expect((await readAgentMemory(user.userId, agentId))?.count).toBe(0);
    await provisionerRuns();
    await chatWith(user, agentId, 'what do you remember?');
    expect(bed.model.requests.at(-1)!.body.messages[0]!.content).not.toContain('secret_fee');

    await lifecycle(user, 'stop');
    await provisionerRuns();
    const stopped = await lifecycle(user, 'reset-memory');
    expect(stopped.body).toMatchObject({ success: true, status: 'stopped' });
    expect(await drain(bed.queueUrl)).toEqual([]);
  });

  it('update moves to a new runtime version, and rolls back when the new image never gets healthy', async () => {
    const { user } = await runningInstance();
    expect((await lifecycle(user, 'update', { runtimeVersion: '2.0.0' })).body).toMatchObject({ success: true, status: 'running', current: 'provisioning' });
    await provisionerRuns();
    const updated = (await getInstance(user.userId, true))!;
    expect(updated.status).toBe('running');
    expect((await instanceOf(user)).runtimeVersion).toBe('2.0.0');
    const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
    expect(await (await fetch(`${updated.handle!.endpoint}/health`, { headers: { authorization: `Bearer ${token}` } })).json()).toMatchObject({
      runtimeVersion: '2.0.0',
    });

    expect((await lifecycle(user, 'update', { image: 'evil.example/miner:latest' })).body).toMatchObject({ code: 'IMAGE_NOT_ALLOWED' });

    bed.launcher.breakImage('registry.example/broken:1');
    reloadConfig({ PROVISION_HEALTH_ATTEMPTS: '3' });
    await lifecycle(user, 'update', { image: 'registry.example/broken:1', runtimeVersion: '3.0.0' });
    await provisionerRuns();
    const rolled = (await getInstance(user.userId, true))!;
    expect(rolled.status).toBe('running');
    expect(rolled.rolledBack).toBe(true);
    expect(rolled.image).toBe(updated.image);
    expect(rolled.runtimeVersion).toBe('2.0.0');
    const images = bed.launcher.launchesFor(user.userId).map((l) => l.image);
    expect(images.slice(-2)).toEqual(['registry.example/broken:1', updated.image]);
  });

  it('repair recreates a running instance on the same image', async () => {
    const { user } = await runningInstance();
    const before = (await getInstance(user.userId, true))!;
    const res = await lifecycle(user, 'repair');
    expect(res.body).toMatchObject({ success: true, status: 'provisioning' });
    await provisionerRuns();
    const after = (await getInstance(user.userId, true))!;
    expect(after.status).toBe('running');
    expect(after.image).toBe(before.image);
    expect(after.handle!.id).not.toBe(before.handle!.id);
  });

  it('a transition whose work cannot be queued answers 502 and leaves the instance in error, not stuck', async () => {
    const { user } = await runningInstance();
    reloadConfig({ PROVISIONING_QUEUE_URL: `${bed.queueUrl}-missing` });
    const res = await lifecycle(user, 'restart');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, status: 'error' });
    reloadConfig({ PROVISIONING_QUEUE_URL: bed.queueUrl });
    expect((await instanceOf(user)).status).toBe('error');
    expect((await lifecycle(user, 'repair')).status).toBe(200);
    await provisionerRuns();
    expect((await instanceOf(user)).status).toBe('running');
  });
});

describe('instance records', () => {
  it('GET /api/instance/:userId has the spec fields; stats are live while running', async () => {
    const { user } = await runningInstance();
    const record = await instanceOf(user);
    expect(Object.keys(record).sort()).toEqual(['plan', 'runtimeVersion', 'startedAt', 'status', 'subdomain', 'url', 'userId']);
    expect(record).toMatchObject({ userId: user.userId, status: 'running', plan: 'solo' });
    // The edge's address on the subdomain (plain http on the local port; https in AWS).
    expect(record.url).toBe(`http://${record.subdomain}.agents.localhost:${bed.edge.port}`);
    const stats = (await call('GET', `/api/instance/${user.userId}/stats`, { session: user, ip: uniqueIp() })).body;
    expect(stats.cpu).toMatch(/^\d+\.\d{2}%$/);
    expect(stats.memory).toMatch(/^[\d.]+(MiB|GiB|KiB)$/);
    expect(stats).toMatchObject({ userId: user.userId, status: 'running', plan: 'solo' });
  });

  it('/token creates one token when none exists, returns the same one afterwards, and stores it encrypted', async () => {
    const user = await accountSession();
    const first = await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() });
    expect(first.status).toBe(200);
    const concurrent = await Promise.all([1, 2, 3].map(() => call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })));
    for (const r of concurrent) expect(r.body.token).toBe(first.body.token);
    const stored = await tenant(user.userId).get(keys.gatewayToken(user.userId));
    expect(JSON.stringify(stored)).not.toContain(first.body.token);
    expect(JSON.stringify(stored)).not.toContain(first.body.token.slice(3));
  });
});

describe('waiting for a state', () => {
  it('waitFor=running answers once the launch settles, with reached: true', async () => {
    const { user } = await runningInstance();
    await lifecycle(user, 'restart');
    const waiting = call('GET', `/api/instance/${user.userId}?waitFor=running&timeout=20`, { session: user, ip: uniqueIp() });
    await provisionerRuns();
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'running', reached: true, userId: user.userId });
  });

  it('answers with the current state at the timeout, and refuses a timeout over 25 s', async () => {
    const { user } = await runningInstance();
    await lifecycle(user, 'stop');
    await provisionerRuns();
    const startedAt = Date.now();
    const res = await call('GET', `/api/instance/${user.userId}?waitFor=running&timeout=1`, { session: user, ip: uniqueIp() });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
    expect(res.body).toMatchObject({ status: 'stopped', reached: false });
    expect((await call('GET', `/api/instance/${user.userId}?waitFor=running&timeout=26`, { session: user, ip: uniqueIp() })).status).toBe(400);
    const already = await call('GET', `/api/instance/${user.userId}?waitFor=stopped`, { session: user, ip: uniqueIp() });
    expect(already.body).toMatchObject({ status: 'stopped', reached: true });
  });
});

describe('lifecycle event log', () => {
  it('tells the story of a provision, stop, start and an update that rolled back, in order, page by page', async () => {
    const { user, agentId } = await runningInstance();
    await lifecycle(user, 'stop');
    await provisionerRuns();
    const started = await lifecycle(user, 'start');
    await provisionerRuns();
    bed.launcher.breakImage('registry.example/broken:1');
    reloadConfig({ PROVISION_HEALTH_ATTEMPTS: '3' });
    const updated = await lifecycle(user, 'update', { image: 'registry.example/broken:1' });
    await provisionerRuns();

    const events: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call('GET', `/api/instance/${user.userId}/events?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        session: user,
        ip: uniqueIp(),
      });
      expect(page.status).toBe(200);
      events.push(...page.body.events);
      cursor = page.body.cursor;
    } while (cursor);
    expect(events.map((e) => e.type)).toEqual([
      'instance.requested',
      'instance.launching',
      'instance.running',
      'agent.running',
      'instance.requested',
      'instance.stopped',
      'instance.requested',
      'instance.launching',
      'instance.running',
      'instance.requested',
      'instance.launching',
      'instance.rolled_back',
      'instance.running',
    ]);
    expect(events[3]).toMatchObject({ agentId, cause: 'provisioner' });
    expect(events[4]).toMatchObject({ op: 'stop', cause: 'user' });
    expect(events.slice(6, 9).every((e) => e.operationId === started.body.operationId)).toBe(true);
    expect(events.slice(9).every((e) => e.operationId === updated.body.operationId)).toBe(true);
    expect(events[9]).toMatchObject({ op: 'update', image: 'registry.example/broken:1' });
    expect(events[11].reason).toContain('health check');
    expect(events.map((e) => e.at)).toEqual([...events.map((e) => e.at)].sort());

    const intruder = await accountSession();
    expect((await call('GET', `/api/instance/${user.userId}/events`, { session: intruder, ip: uniqueIp() })).status).toBe(403);
  });

  it('records a superseded launch', async () => {
    const { user } = await runningInstance();
    const first = await lifecycle(user, 'restart');
    await lifecycle(user, 'stop');
    await provisionerRuns();
    const { events } = (await call('GET', `/api/instance/${user.userId}/events?limit=100`, { session: user, ip: uniqueIp() })).body;
    expect(events.slice(-3).map((e: any) => e.type)).toEqual(['instance.superseded', 'instance.requested', 'instance.stopped']);
    expect(events.at(-3)).toMatchObject({ operationId: first.body.operationId, reason: 'superseded by stop' });
  });
});
