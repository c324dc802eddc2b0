import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cachedPlatformMetrics, clearPlatformMetricsCache, PLATFORM_METRICS_CACHE_MS, platformMetrics } from '#functions/http/metrics/platform';
import { reloadConfig } from '#platform/config';
import { PlatformMetricsBody } from '#contract/metrics';
import { agentStatus, createAgent, listAgents, readPlatformCounters, type AgentStatusValue } from '#data/agents';
import { resetDbClient } from '#data/client';
import {
  ensureInstance,
  getInstance,
  IllegalTransitionError,
  NoInstanceError,
  settleLaunch,
  settlePendingAgents,
  transitionInstance,
  type InstanceOp,
} from '#data/instances';
import { clearTableSizeCache, messageCountUpdate, type SampleInput } from '#data/metrics';
import { transact } from '#data/tenant';
import { call } from '../helpers/api';
import { batchPut, isolatedTable, sampleAt } from './metrics-helpers';

let table: Awaited<ReturnType<typeof isolatedTable>>;

beforeAll(async () => {
  table = await isolatedTable();
});

afterEach(() => {
  reloadConfig({ METRICS_STORAGE_QUOTA_MB: undefined, TABLE_NAME: table.name });
  resetDbClient();
  clearTableSizeCache();
  clearPlatformMetricsCache();
});

afterAll(async () => {
  await table.drop();
});

const DAY = 86_400_000;

describe('GET /api/metrics (spec 4.10)', () => {
  it('answers zeros, never invented figures, when nothing has happened, in the exact spec shape', async () => {
    const res = await call('GET', '/api/metrics');
    expect(res.status).toBe(200);
    expect(PlatformMetricsBody().safeParse(res.body).success).toBe(true);
    expect(res.body.status).toBe('ok');
    expect(Math.abs(Date.parse(res.body.timestamp) - Date.now())).toBeLessThan(60_000);
    const m = res.body.metrics;
    expect(m.agents).toEqual({ total: 0, active: 0, inactive: 0, failed: 0 });
    expect(m.messages).toEqual({ today: 0, thisWeek: 0, thisMonth: 0 });
    expect(m.deployments).toEqual({ total: 0, successful: 0, failed: 0 });
    expect(m.uptime).toEqual({ platformUptime: 0, averageAgentUptime: 0 });
    expect(m.performance).toEqual({ averageResponseTime: 0, successRate: '0%', errorRate: '0%' });
    expect(m.storage.total).toBe(25_600);
  });

  it('counts each stored exchange in the same write: today goes up by one per user message', async () => {
    const { appendExchange } = await import('#data/agents');
    const userId = `u_${randomUUID().replaceAll('-', '')}`;
    // A bare agent item: createAgent would move the agent counters the recount test below tallies.
    const { tenant } = await import('#data/tenant');
    const keys = await import('#data/keys');
    const agent = { id: 'agt_counter' };
    await tenant(userId).put({ ...keys.agent(userId, agent.id), id: agent.id, name: 'counter' });
    const before = (await platformMetrics()).metrics.messages.today;
    await appendExchange(userId, agent.id, {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      responseMs: 5,
    });
    await appendExchange(userId, agent.id, { messages: [{ role: 'user', content: 'again' }], failed: true });
    expect((await platformMetrics()).metrics.messages.today).toBe(before + 2);
  });

  it('shares one computation per container for a few seconds, then recomputes', async () => {
    const { messageCountUpdate: bump } = await import('#data/metrics');
    const t0 = Date.now();
    const first = await cachedPlatformMetrics(t0);
    await transact([bump(5)!]);
    expect((await cachedPlatformMetrics(t0 + 1000)).metrics.messages.today).toBe(first.metrics.messages.today);
    expect((await cachedPlatformMetrics(t0 + PLATFORM_METRICS_CACHE_MS)).metrics.messages.today).toBe(first.metrics.messages.today + 5);
  });

  it('agent and deployment figures equal a recount after 200 random agent operations', { timeout: 240_000 }, async () => {
    const users = Array.from({ length: 6 }, () => `u_${randomUUID().replaceAll('-', '')}`);
    const deployments = { total: 0, successful: 0, failed: 0 };
    const lifecycle: InstanceOp[] = ['start', 'stop', 'restart', 'update', 'repair', 'reset-memory'];
    const kinds = ['provision', 'provision', 'settle-ok', 'settle-ok', 'settle-fail', 'crash', ...lifecycle] as const;

    for (let i = 0; i < 200; i += 1) {
      const userId = users[randomInt(users.length)]!;
      const kind = kinds[randomInt(kinds.length)]!;
      const instance = await getInstance(userId, true);
      if (kind === 'provision') {
        await createAgent(userId, { name: `agent ${i}`, model: 'test/model', config: {}, source: 'api' }, 1000);
        if (!instance) {
          if ((await ensureInstance(userId, { ownerEmail: `${userId}@example.com`, image: 'img', runtimeVersion: '1.0.0', jobOwner: `job-${i}` })).created)
            deployments.total += 1;
        } else if (instance.status === 'stopped' || instance.status === 'error') {
          await transitionInstance(userId, 'launch');
          deployments.total += 1;
        }
      } else if (kind === 'settle-ok' || kind === 'settle-fail' || kind === 'crash') {
        const from = kind === 'crash' ? 'running' : 'provisioning';
        if (instance?.status === from) {
          const outcome = kind === 'settle-ok' ? ({ status: 'running', set: {} } as const) : ({ status: 'error', reason: 'test' } as const);
          const settled = await settleLaunch(userId, instance.generation, outcome);
          if (settled && kind === 'settle-ok') deployments.successful += 1;
          if (settled && kind === 'settle-fail') deployments.failed += 1;
        }
      } else {
        try {
          const { after, changed } = await transitionInstance(userId, kind);
          if (changed && after.status === 'provisioning') deployments.total += 1;
        } catch (err) {
          if (!(err instanceof IllegalTransitionError) && !(err instanceof NoInstanceError)) throw err;
        }
      }
      // What the provisioner does once a launch settles: waiting agents follow the instance.
      await settlePendingAgents(userId);
    }

    const recount: Record<AgentStatusValue, number> = { provisioning: 0, running: 0, stopped: 0, error: 0 };
    let total = 0;
    for (const userId of users) {
      const status = (await getInstance(userId, true))?.status;
      for (const agent of await listAgents(userId, true)) {
        recount[agentStatus(agent, status)] += 1;
        total += 1;
      }
    }
    expect(total).toBeGreaterThan(0);

    const counters = await readPlatformCounters();
    expect(counters.agents).toEqual({ total, ...recount });
    expect(counters.deployments).toEqual(deployments);

    const res = await call('GET', '/api/metrics');
    expect(res.status).toBe(200);
    expect(res.body.metrics.agents).toEqual({ total, active: recount.running, inactive: recount.stopped + recount.provisioning, failed: recount.error });
    expect(res.body.metrics.deployments).toEqual(deployments);
  });

  it('counts messages by UTC day, ISO week (from Monday) and calendar month', async () => {
    const count = (n: number, iso: string) => transact([messageCountUpdate(n, new Date(iso))!]);
    // Wednesday 2031-05-14: the week began on Monday the 12th, the month on the 1st.
    await count(1, '2031-05-14T23:59:59.000Z');
    await count(2, '2031-05-14T00:00:00.000Z');
    await count(4, '2031-05-12T08:00:00.000Z');
    await count(8, '2031-05-11T23:59:59.999Z');
    await count(16, '2031-05-01T00:00:00.000Z');
    await count(32, '2031-04-30T23:59:59.999Z');
    await count(64, '2031-05-15T00:00:00.000Z');
    expect((await platformMetrics(new Date('2031-05-14T12:00:00.000Z'))).metrics.messages).toEqual({ today: 3, thisWeek: 7, thisMonth: 31 });
    // Sunday 2031-06-01: this week began in May, this month today.
    await count(128, '2031-06-01T10:00:00.000Z');
    await count(256, '2031-05-26T10:00:00.000Z');
    expect((await platformMetrics(new Date('2031-06-01T12:00:00.000Z'))).metrics.messages).toEqual({ today: 128, thisWeek: 384, thisMonth: 128 });
    expect(messageCountUpdate(0)).toBeUndefined();
  });

  it('takes agent uptime from the heartbeat checks of the last 30 days; the API figures come from its answers (none then)', async () => {
    const now = new Date('2032-03-20T12:00:00.000Z');
    const sample = (daysAgo: number, s: Partial<SampleInput>) => sampleAt(`u_${randomUUID().slice(0, 8)}`, daysAgo * DAY, s, now.getTime());
    await sample(0, { messages: 6, errors: 1, responseMsTotal: 500 });
    await sample(2, { messages: 4, errors: 0, responseMsTotal: 400 });
    await sample(10, { reachable: true, healthy: false });
    await sample(29, { reachable: false, healthy: false });
    await sample(31, { reachable: false, healthy: false, messages: 1000, errors: 1000 });
    const m = (await platformMetrics(now)).metrics;
    expect(m.uptime).toEqual({ platformUptime: 0, averageAgentUptime: 50 });
    expect(m.performance).toEqual({ averageResponseTime: 0, successRate: '0%', errorRate: '0%' });
  });

  it('reports storage from the table size DynamoDB gives, against the configured quota', async () => {
    // About 1 MB of items (DynamoDB Local reports the real size, as AWS does every few hours).
    await batchPut(Array.from({ length: 200 }, (_, i) => ({ pk: `BLOB#${randomUUID()}`, sk: String(i), blob: 'x'.repeat(5000) })));
    reloadConfig({ METRICS_STORAGE_QUOTA_MB: '2' });
    const res = await call('GET', '/api/metrics');
    const { used, total, percentUsed } = res.body.metrics.storage;
    expect(total).toBe(2);
    expect(used).toBeGreaterThan(0.95);
    expect(used).toBeLessThan(2);
    expect(percentUsed).toBeCloseTo((used / 2) * 100, 1);
  });

  it('answers 500 with exactly the spec body when the figures cannot be read', async () => {
    reloadConfig({ TABLE_NAME: `missing-${randomUUID().slice(0, 8)}` });
    resetDbClient();
    clearTableSizeCache();
    const res = await call('GET', '/api/metrics');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'Failed to fetch metrics', metrics: {} });
  });
});
