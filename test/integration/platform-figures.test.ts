import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runHeartbeat } from '#functions/workers/heartbeat/sweep';
import { clearPlatformMetricsCache, platformMetrics } from '#functions/http/metrics/platform';
import { reloadConfig } from '#platform/config';
import { resetDbClient } from '#data/client';
import { getHeartbeat, saveHeartbeat, startDefaultHeartbeat } from '#data/heartbeat';
import { gatewayToken, getInstance, settleLaunch } from '#data/instances';
import { discardPendingRequestOutcomes, flushRequestOutcomes, noteRequestOutcome, REQUEST_FLUSH_EVERY, requestOutcomesBetween } from '#data/request-outcomes';
import { call } from '../helpers/api';
import { fakeRuntime, isolatedTable, runningInstance } from './metrics-helpers';

/**
 * The public uptime and success rate are measured from what the platform sees
 * (the API's answers, the instances' health), so a healthy platform does not read 0 %.
 */

let table: Awaited<ReturnType<typeof isolatedTable>>;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  table = await isolatedTable();
});

beforeEach(() => {
  discardPendingRequestOutcomes();
  clearPlatformMetricsCache();
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  reloadConfig({ TABLE_NAME: table.name });
  resetDbClient();
});

afterAll(async () => {
  await table.drop();
});

const HOUR = 3_600_000;
const newUserId = () => `u_${randomUUID().replaceAll('-', '')}`;

/** The public figures as a caller reads them, after this process wrote what it noted. */
async function publicFigures() {
  await flushRequestOutcomes();
  clearPlatformMetricsCache();
  const res = await call('GET', '/api/metrics');
  expect(res.status).toBe(200);
  return res.body.metrics as { uptime: { platformUptime: number; averageAgentUptime: number }; performance: Record<string, string | number> };
}

/** Counts the request-outcome writes the DynamoDB client sends, by wrapping its `send`. */
async function countOutcomeWrites() {
  const { db } = await import('#data/client');
  const client = db();
  const original = client.send.bind(client);
  let writes = 0;
  client.send = ((command: { input?: { Key?: { sk?: string } } }, ...rest: unknown[]) => {
    if (String(command.input?.Key?.sk ?? '').startsWith('requests#')) writes += 1;
    return (original as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
  }) as typeof client.send;
  return {
    writes: () => writes,
    restore() {
      client.send = original;
    },
  };
}

describe('platform uptime and success rate from the API answers', () => {
  it('a healthy platform with traffic reads 100 %, and counting it costs one write per many requests, not one each', async () => {
    const counting = await countOutcomeWrites();
    const requests = 250;
    try {
      for (let i = 0; i < requests; i += 1) {
        // 200s (the public figures, shared for a few seconds) and 401s: a refused caller is the API working, not failing.
        const res = i % 5 === 0 ? await call('GET', '/api/heartbeat') : await call('GET', '/api/metrics');
        expect(res.status).toBeLessThan(500);
      }
      await flushRequestOutcomes();
    } finally {
      counting.restore();
    }
    // One write when the container's first answer came, then one per REQUEST_FLUSH_EVERY answers or REQUEST_FLUSH_MS, one at the end.
    expect(counting.writes()).toBeGreaterThanOrEqual(2);
    expect(counting.writes()).toBeLessThanOrEqual(Math.ceil(requests / REQUEST_FLUSH_EVERY) + 4);
    const minutes = await requestOutcomesBetween(new Date(Date.now() - HOUR), new Date());
    const stored = [...minutes.values()].reduce((t, m) => ({ total: t.total + m.total, failed: t.failed + m.failed }), { total: 0, failed: 0 });
    expect(stored).toEqual({ total: requests, failed: 0 });

    const m = await publicFigures();
    expect(m.uptime.platformUptime).toBe(100);
    expect(m.performance.successRate).toBe('100%');
    expect(m.performance.errorRate).toBe('0%');
    expect(m.performance.averageResponseTime).toBeGreaterThanOrEqual(0);
  });

  it('5xx answers injected through the real pipeline lower the success rate', async () => {
    await call('GET', '/api/health');
    const before = await publicFigures();
    expect(before.performance.errorRate).toBe('0%');

    // The table is gone for a moment: the public endpoint answers 500, as the spec says.
    reloadConfig({ TABLE_NAME: `missing-${randomUUID().slice(0, 8)}` });
    resetDbClient();
    clearPlatformMetricsCache();
    for (let i = 0; i < 3; i += 1) expect((await call('GET', '/api/metrics')).status).toBe(500);
    reloadConfig({ TABLE_NAME: table.name });
    resetDbClient();

    const after = await publicFigures();
    expect(Number.parseFloat(String(after.performance.successRate))).toBeLessThan(100);
    expect(Number.parseFloat(String(after.performance.errorRate))).toBeGreaterThan(0);
    expect(Number.parseFloat(String(after.performance.successRate)) + Number.parseFloat(String(after.performance.errorRate))).toBeCloseTo(100, 1);
  });

  it('uptime counts the minutes in which most answers were not 5xx; only the last 24 hours count', async () => {
    const now = Date.parse('2033-07-01T12:00:30.000Z');
    const minuteA = now - 10 * 60_000;
    const minuteB = now - 5 * 60_000;
    const old = now - 25 * HOUR;
    for (let i = 0; i < 9; i += 1) noteRequestOutcome(200, 10, minuteA);
    noteRequestOutcome(500, 10, minuteA);
    for (let i = 0; i < 3; i += 1) noteRequestOutcome(503, 10, minuteB);
    noteRequestOutcome(201, 10, minuteB);
    for (let i = 0; i < 100; i += 1) noteRequestOutcome(500, 1000, old);
    await flushRequestOutcomes(now);

    const m = (await platformMetrics(new Date(now))).metrics;
    expect(m.uptime.platformUptime).toBe(50);
    expect(m.performance).toEqual({ averageResponseTime: 10, successRate: '71.43%', errorRate: '28.57%' });
  });

  it('a failed write keeps its notes for the next one, which waits instead of asking the table again at once', async () => {
    const now = Date.parse('2033-08-01T08:00:00.000Z');
    noteRequestOutcome(200, 5, now);
    reloadConfig({ TABLE_NAME: `missing-${randomUUID().slice(0, 8)}` });
    resetDbClient();
    await expect(flushRequestOutcomes(now)).rejects.toThrow();
    reloadConfig({ TABLE_NAME: table.name });
    resetDbClient();
    expect(noteRequestOutcome(500, 5, now)).toBe(false);
    expect(noteRequestOutcome(200, 5, now + 1000)).toBe(false);
    await flushRequestOutcomes(now);
    expect([...(await requestOutcomesBetween(new Date(now), new Date(now))).values()]).toEqual([{ total: 3, failed: 1, msTotal: 15 }]);
  });
});

describe('agent uptime from the instances health, with the heartbeat on by default', () => {
  it('an instance that starts running gets the default heartbeat, which checks it: a healthy one reads 100 %, a dead one lowers it', async () => {
    const now = new Date();
    const userId = newUserId();
    const runtime = await fakeRuntime(await gatewayToken(userId));
    closers.push(runtime.close);
    await runningInstance(userId, runtime.url);

    expect(await startDefaultHeartbeat(userId, now)).toBe(true);
    expect(await getHeartbeat(userId, true)).toMatchObject({ enabled: true, frequency: '3h', nextHeartbeat: now.toISOString() });
    expect(await startDefaultHeartbeat(userId, now)).toBe(false);

    expect(await runHeartbeat({ now })).toMatchObject({ sampled: 1, markedUnhealthy: 0 });
    expect((await platformMetrics(now)).metrics.uptime.averageAgentUptime).toBe(100);

    // The process dies; its next check (3 h later) finds nothing answering.
    await runtime.close();
    const later = new Date(now.getTime() + 3 * HOUR);
    expect(await runHeartbeat({ now: later, retryPauseMs: 10 })).toMatchObject({ sampled: 1, markedUnhealthy: 1 });
    expect((await getInstance(userId, true))?.status).toBe('error');
    expect((await platformMetrics(later)).metrics.uptime.averageAgentUptime).toBe(50);
  });

  it('a running instance found dead between checks (task stopped, process gone) counts as a failed check too', async () => {
    const now = new Date(Date.parse('2033-09-01T10:00:00.000Z'));
    const healthyUser = newUserId();
    const runtime = await fakeRuntime(await gatewayToken(healthyUser));
    closers.push(runtime.close);
    await runningInstance(healthyUser, runtime.url);
    await startDefaultHeartbeat(healthyUser, now);
    await runHeartbeat({ now });
    expect((await platformMetrics(now)).metrics.uptime.averageAgentUptime).toBe(100);

    const crashedUser = newUserId();
    await runningInstance(crashedUser, 'http://127.0.0.1:9');
    const instance = (await getInstance(crashedUser, true))!;
    expect(await settleLaunch(crashedUser, instance.generation, { status: 'error', reason: 'the task stopped' }, now)).toBeDefined();
    expect((await platformMetrics(now)).metrics.uptime.averageAgentUptime).toBe(50);
  });

  it('an account that switched its heartbeat off keeps it off when its instance starts', async () => {
    const userId = newUserId();
    await saveHeartbeat(userId, { enabled: false });
    expect(await startDefaultHeartbeat(userId)).toBe(false);
    expect(await getHeartbeat(userId, true)).toMatchObject({ enabled: false, nextHeartbeat: null });
  });
});
