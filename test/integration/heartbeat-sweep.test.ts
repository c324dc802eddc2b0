import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/heartbeat/handler';
import { runHeartbeat } from '#functions/workers/heartbeat/sweep';
import { agentStatus, appendExchange, getAgent, readPlatformCounters } from '#data/agents';
import { dueShardOf, getHeartbeat, type HeartbeatRecord } from '#data/heartbeat';
import { gatewayToken, getInstance } from '#data/instances';
import * as keys from '#data/keys';
import { latestSamples, type MetricSample } from '#data/metrics';
import { tenant } from '#data/tenant';
import { batchPut, countReads, fakeRuntime, isolatedTable, runningInstance } from './metrics-helpers';

let table: Awaited<ReturnType<typeof isolatedTable>>;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  table = await isolatedTable();
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  await table.drop();
});

const HOUR = 3_600_000;
const newUserId = () => `u_${randomUUID().replaceAll('-', '')}`;

function heartbeatItem(userId: string, state: 'due' | 'later' | 'off', now: Date, offsetMs: number): Record<string, unknown> {
  const base = { ...keys.heartbeat(userId), userId, frequency: '1h', lastHeartbeat: null, lastUpdated: now.toISOString(), version: 1 };
  if (state === 'off') return { ...base, enabled: false, nextHeartbeat: null };
  const next = new Date(now.getTime() + (state === 'due' ? -offsetMs : offsetMs)).toISOString();
  return { ...base, enabled: true, nextHeartbeat: next, gsi1pk: keys.heartbeatDuePartition(dueShardOf(userId)), gsi1sk: next };
}

async function seed(now: Date, counts: { due: number; later: number; off: number }) {
  const users = { due: [] as string[], later: [] as string[], off: [] as string[] };
  const items: Record<string, unknown>[] = [];
  for (const state of ['due', 'later', 'off'] as const) {
    for (let i = 0; i < counts[state]; i += 1) {
      const userId = newUserId();
      users[state].push(userId);
      items.push(heartbeatItem(userId, state, now, (i + 1) * 60_000));
    }
  }
  await batchPut(items);
  return users;
}

async function runtimeFor(userId: string, agents = 1) {
  const runtime = await fakeRuntime(await gatewayToken(userId));
  closers.push(runtime.close);
  const agentIds = await runningInstance(userId, runtime.url, agents);
  return { runtime, agentIds };
}

const samplesOf = (userId: string) => tenant(userId).queryAll<MetricSample>(keys.metricSamplePrefix);

describe('heartbeat sweep (spec 4.10)', () => {
  it('over 1,000 users touches and reads only the due ones, through the index', async () => {
    const now = new Date();
    const users = await seed(now, { due: 25, later: 925, off: 50 });
    const [healthyA, healthyB, sick] = users.due;
    const a = await runtimeFor(healthyA!, 2);
    a.runtime.state.cpuPercent = 42.42;
    a.runtime.state.usedBytes = 512 * 1024 * 1024;
    await runtimeFor(healthyB!);
    const s = await runtimeFor(sick!, 3);
    s.runtime.state.healthy = false;
    const countersBefore = await readPlatformCounters();

    const reads = countReads();
    let result;
    try {
      result = await runHeartbeat({ now, retryPauseMs: 10 });
    } finally {
      reads.restore();
    }

    expect(result).toEqual({ due: 25, claimed: 25, sampled: 3, markedUnhealthy: 1 });
    // The index handed back exactly the due users, and every other read is per due user.
    expect(reads.tally.indexItems).toBe(25);
    expect(reads.tally.commands.ScanCommand).toBeUndefined();
    expect(reads.tally.items).toBeLessThanOrEqual(25 * 4);
    expect(reads.tally.items).toBeLessThan(users.later.length / 5);

    for (const userId of users.due) {
      const hb = (await getHeartbeat(userId, true))!;
      expect(hb.lastHeartbeat).toBe(now.toISOString());
      expect(hb.nextHeartbeat).toBe(new Date(now.getTime() + HOUR).toISOString());
      expect(hb.gsi1sk).toBe(hb.nextHeartbeat);
      expect(hb.version).toBe(2);
    }
    for (const userId of [...users.later, ...users.off]) {
      const hb = (await getHeartbeat(userId, true))!;
      expect(hb.lastHeartbeat).toBeNull();
      expect(hb.version).toBe(1);
    }

    // Samples only where an instance runs, with the runtime's own figures.
    const [sampleA] = await samplesOf(healthyA!);
    expect(sampleA).toMatchObject({ timestamp: now.toISOString(), cpu: 42.42, memory: 50, messages: 0, errors: 0, healthy: true, reachable: true });
    expect(sampleA!.expiresAt).toBe(Math.floor(now.getTime() / 1000) + 35 * 86_400);
    expect(await samplesOf(healthyB!)).toHaveLength(1);
    expect(await samplesOf(users.due[3]!)).toHaveLength(0);

    // The unhealthy instance and its agents are marked, and the platform counters moved with them.
    const [sickSample] = await samplesOf(sick!);
    expect(sickSample).toMatchObject({ healthy: false, reachable: true, cpu: null, memory: null });
    const instance = (await getInstance(sick!, true))!;
    expect(instance.status).toBe('error');
    expect(instance.lastError).toMatch(/heartbeat/);
    for (const agentId of s.agentIds) expect(agentStatus((await getAgent(sick!, agentId))!, instance.status)).toBe('error');
    expect((await getInstance(healthyA!, true))!.status).toBe('running');
    const countersAfter = await readPlatformCounters();
    expect(countersAfter.agents.running).toBe(countersBefore.agents.running - 3);
    expect(countersAfter.agents.error).toBe(countersBefore.agents.error + 3);
  });

  it('overlapping runs process each due user exactly once', async () => {
    const now = new Date();
    const users = await seed(now, { due: 40, later: 20, off: 0 });
    await runtimeFor(users.due[0]!);
    await runtimeFor(users.due[1]!);

    const runs = await Promise.all([runHeartbeat({ now }), runHeartbeat({ now }), runHeartbeat({ now })]);

    // They really overlapped: more than one run found the users due before any claim landed.
    expect(runs.filter((r) => r.due > 0).length).toBeGreaterThan(1);
    expect(runs.reduce((n, r) => n + r.claimed, 0)).toBe(40);
    expect(runs.reduce((n, r) => n + r.sampled, 0)).toBe(2);
    for (const userId of users.due) expect((await getHeartbeat(userId, true))!.version).toBe(2);
    expect(await samplesOf(users.due[0]!)).toHaveLength(1);
    expect(await samplesOf(users.due[1]!)).toHaveLength(1);
    // Nothing is due any more until the next hour.
    expect(await runHeartbeat({ now })).toEqual({ due: 0, claimed: 0, sampled: 0, markedUnhealthy: 0 });
  });

  it('takes at most the configured number of users per run; the rest stay due for the next', async () => {
    const now = new Date();
    await seed(now, { due: 30, later: 0, off: 0 });
    const first = await runHeartbeat({ now, maxUsers: 16 });
    expect(first.claimed).toBeLessThanOrEqual(16);
    expect(first.claimed).toBeGreaterThan(0);
    const second = await runHeartbeat({ now, maxUsers: 100 });
    expect(first.claimed + second.claimed).toBe(30);
  });

  it('a settings change after the index was read wins over the run (the claim is conditional)', async () => {
    const now = new Date();
    const users = await seed(now, { due: 1, later: 0, off: 0 });
    const userId = users.due[0]!;
    const stale = (await getHeartbeat(userId, true))!;
    const { saveHeartbeat, claimHeartbeat } = await import('#data/heartbeat');
    await saveHeartbeat(userId, { enabled: false }, now);
    expect(await claimHeartbeat(stale, now)).toBeUndefined();
    const hb = (await getHeartbeat(userId, true))!;
    expect(hb).toMatchObject({ enabled: false, nextHeartbeat: null, lastHeartbeat: null });
  });

  it('counts the messages and errors of each interval from the agents, not since the beginning', async () => {
    let now = new Date(Date.now() - 3 * HOUR);
    const users = await seed(now, { due: 1, later: 0, off: 0 });
    const userId = users.due[0]!;
    const { agentIds } = await runtimeFor(userId, 2);
    await appendExchange(userId, agentIds[0]!, {
      messages: [
        { role: 'user', content: 'before the first heartbeat' },
        { role: 'assistant', content: 'ok' },
      ],
      responseMs: 100,
    });

    await runHeartbeat({ now });
    for (let i = 0; i < 3; i += 1) {
      await appendExchange(userId, agentIds[i % 2]!, {
        messages: [
          { role: 'user', content: `m${i}` },
          { role: 'assistant', content: 'ok' },
        ],
        responseMs: 200,
      });
    }
    await appendExchange(userId, agentIds[1]!, { messages: [{ role: 'user', content: 'fails' }], failed: true });
    now = new Date(now.getTime() + HOUR);
    await runHeartbeat({ now });
    now = new Date(now.getTime() + HOUR);
    await runHeartbeat({ now });

    const samples = await samplesOf(userId);
    expect(samples.map((x) => [x.messages, x.errors, x.responseMsTotal])).toEqual([
      [0, 0, 0],
      [4, 1, 600],
      [0, 0, 0],
    ]);
    expect((await latestSamples(userId, 1, now))[0]!.timestamp).toBe(now.toISOString());
  });

  it('the scheduled handler runs a sweep with a deadline from the Lambda context', async () => {
    const now = new Date();
    const users = await seed(new Date(now.getTime() - 60_000), { due: 3, later: 0, off: 0 });
    const result = await handler({}, { getRemainingTimeInMillis: () => 300_000 });
    expect(result.claimed).toBe(3);
    for (const userId of users.due) expect((await getHeartbeat(userId, true))!.lastHeartbeat).not.toBeNull();
    // A run with no time left takes nobody.
    await seed(new Date(now.getTime() - 60_000), { due: 2, later: 0, off: 0 });
    expect((await handler({}, { getRemainingTimeInMillis: () => 1000 })).claimed).toBe(0);
  });

  it('leaves a heartbeat record of the expected shape', async () => {
    const now = new Date();
    const users = await seed(now, { due: 1, later: 0, off: 0 });
    await runHeartbeat({ now });
    const hb = (await getHeartbeat(users.due[0]!, true)) as HeartbeatRecord;
    expect(Object.keys(hb).sort()).toEqual(
      ['enabled', 'frequency', 'gsi1pk', 'gsi1sk', 'lastHeartbeat', 'lastUpdated', 'nextHeartbeat', 'pk', 'sk', 'userId', 'version'].sort(),
    );
  });
});
