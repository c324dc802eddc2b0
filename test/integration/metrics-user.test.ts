import { describe, expect, it } from 'vitest';
import { growth } from '#functions/http/metrics/summary';
import { HistoricalMetricsBody, MetricsSummaryBody, PerformanceMetricsBody } from '#contract/metrics';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, testSession, type TestSession } from '../helpers/api';

import { sampleAt } from './metrics-helpers';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const get = (user: TestSession, path: string) => call('GET', path, { session: user });

describe('GET /api/metrics/:userId/historical', () => {
  it('answers the samples of the range, oldest first, with their averages; 24h by default', async () => {
    const user = await testSession();
    await sampleAt(user.userId, 40 * DAY, { cpu: 99, messages: 1000 });
    await sampleAt(user.userId, 10 * DAY, { cpu: 30, memory: 60, messages: 9, errors: 3 });
    await sampleAt(user.userId, 2 * DAY, { cpu: 20, memory: 40, messages: 6, errors: 0 });
    await sampleAt(user.userId, 2 * HOUR, { cpu: 10, memory: 30, messages: 4, errors: 2 });
    await sampleAt(user.userId, 1 * HOUR, { cpu: null, memory: null, messages: 2, errors: 1, healthy: false });

    const day = await get(user, `/api/metrics/${user.userId}/historical`);
    expect(day.status).toBe(200);
    expect(HistoricalMetricsBody().safeParse(day.body).success).toBe(true);
    expect(day.body.userId).toBe(user.userId);
    expect(day.body.timeRange).toBe('24h');
    expect(day.body.metrics.map((m: { cpu: number | null }) => m.cpu)).toEqual([10, null]);
    expect(day.body.metrics[0]).toEqual({ timestamp: expect.any(String), cpu: 10, memory: 30, messages: 4, errors: 2 });
    // cpu and memory over the measured samples only; messages and errors over all.
    expect(day.body.averages).toEqual({ cpu: 10, memory: 30, messages: 3, errors: 1.5 });

    const week = await get(user, `/api/metrics/${user.userId}/historical?range=7d`);
    expect(week.body.timeRange).toBe('7d');
    expect(week.body.metrics).toHaveLength(3);
    expect(week.body.averages).toEqual({ cpu: 15, memory: 35, messages: 4, errors: 1 });

    const month = await get(user, `/api/metrics/${user.userId}/historical?range=30d`);
    expect(month.body.metrics).toHaveLength(4);
    expect(month.body.averages).toEqual({ cpu: 20, memory: 43.33, messages: 5.25, errors: 1.5 });
    const times = month.body.metrics.map((m: { timestamp: string }) => Date.parse(m.timestamp));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('answers an empty list and zero averages when there are no samples', async () => {
    const user = await testSession();
    const res = await get(user, `/api/metrics/${user.userId}/historical?range=30d`);
    expect(res.status).toBe(200);
    expect(res.body.metrics).toEqual([]);
    expect(res.body.averages).toEqual({ cpu: 0, memory: 0, messages: 0, errors: 0 });
  });

  it.each(['1h', '90d', '24H', ''])('refuses the range %j with 400', async (range) => {
    const user = await testSession();
    expect((await get(user, `/api/metrics/${user.userId}/historical?range=${range}`)).status).toBe(400);
  });
});

describe('GET /api/metrics/:userId/performance', () => {
  it('answers zeros with no samples', async () => {
    const user = await testSession();
    const res = await get(user, `/api/metrics/${user.userId}/performance`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ cpu: 0, memory: 0, errorRate: 0, responseTime: 0 });
  });

  it('takes cpu and memory from the newest measured sample, error rate and response time from the newest samples', async () => {
    const user = await testSession();
    await sampleAt(user.userId, 3 * HOUR, { cpu: 80, memory: 90, messages: 100, errors: 100 });
    for (let i = 12; i >= 2; i -= 1) await sampleAt(user.userId, i * 60_000, { cpu: 5, memory: 5, messages: 0 });
    await sampleAt(user.userId, 90_000, { cpu: 33.5, memory: 44.25, messages: 8, errors: 2, responseMsTotal: 1200 });
    await sampleAt(user.userId, 30_000, { cpu: null, memory: null, messages: 2, errors: 0, responseMsTotal: 300 });
    const res = await get(user, `/api/metrics/${user.userId}/performance`);
    expect(PerformanceMetricsBody().safeParse(res.body).success).toBe(true);
    // The three-hour-old sample is not among the newest 12, so its 100% errors do not count.
    expect(res.body).toEqual({ cpu: 33.5, memory: 44.25, errorRate: 20, responseTime: 188 });
  });
});

describe('GET /api/metrics/:userId/summary', () => {
  it('answers zeros, never invented numbers, when the account stores nothing', async () => {
    const user = await testSession();
    const res = await get(user, `/api/metrics/${user.userId}/summary`);
    expect(res.status).toBe(200);
    expect(MetricsSummaryBody().safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      revenue: { month: '$0.00', total: '$0.00', change: '0%' },
      bookings: { completed: 0, pending: 0, conversion: '0%' },
      fans: { total: 0, active: 0, growth: '0%', segmentation: { superfans: 0, casual: 0, new: 0 } },
      streams: { monthlyListeners: 0, monthlyStreams: 0, growth: '0%' },
      skills: { active: 0, total: 0, growth: '0%' },
      moneyMoved: { month: '$0.00', total: '$0.00', transfers: 0, splitPayments: 0, escrowReleases: 0 },
      messagesSent: { month: 0, total: 0, emails: 0, channelMessages: 0, webhookMessages: 0 },
    });
  });

  it("counts the account's stored records", async () => {
    const user = await testSession();
    const store = tenant(user.userId);
    const now = new Date();
    const month = now.toISOString().slice(0, 7);
    const prev = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    const prevMonth = prev.toISOString().slice(0, 7);
    const put = (key: { pk: string; sk: string }, fields: Record<string, unknown>) => store.put({ ...key, ...fields });
    await put(keys.installedSkill(user.userId, 'agt_1', 'calendar'), { installedAt: now.toISOString() });
    await put(keys.installedSkill(user.userId, 'agt_1', 'email'), { installedAt: now.toISOString(), enabled: false });
    await put(keys.installedSkill(user.userId, 'agt_2', 'calendar'), { installedAt: prev.toISOString() });
    await put(keys.booking(user.userId, 'b1'), { status: 'completed' });
    await put(keys.booking(user.userId, 'b2'), { status: 'completed' });
    await put(keys.booking(user.userId, 'b3'), { status: 'pending' });
    await put(keys.booking(user.userId, 'b4'), { status: 'cancelled' });
    await put(keys.fan(user.userId, 'f1'), { segment: 'superfan', createdAt: prev.toISOString(), lastActiveAt: now.toISOString() });
    await put(keys.fan(user.userId, 'f2'), { segment: 'casual', createdAt: now.toISOString() });
    await put(keys.fan(user.userId, 'f3'), { segment: 'new', createdAt: now.toISOString(), lastActiveAt: new Date(now.getTime() - 45 * DAY).toISOString() });
    await put(keys.streamsMonth(user.userId, prevMonth), { listeners: 100, streams: 400 });
    await put(keys.streamsMonth(user.userId, month), { listeners: 150, streams: 500 });
    await put(keys.revenueMonth(user.userId, '2020-01'), { amountCents: 100_000 });
    await put(keys.revenueMonth(user.userId, prevMonth), { amountCents: 20_000 });
    await put(keys.revenueMonth(user.userId, month), { amountCents: 15_100 });

    const res = await get(user, `/api/metrics/${user.userId}/summary`);
    expect(res.status).toBe(200);
    expect(MetricsSummaryBody().safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      revenue: { month: '$151.00', total: '$1,351.00', change: '-24.5%' },
      bookings: { completed: 2, pending: 1, conversion: '50%' },
      fans: { total: 3, active: 1, growth: '+100%', segmentation: { superfans: 1, casual: 1, new: 1 } },
      streams: { monthlyListeners: 150, monthlyStreams: 500, growth: '+25%' },
      skills: { active: 2, total: 3, growth: '+100%' },
      moneyMoved: { month: '$0.00', total: '$0.00', transfers: 0, splitPayments: 0, escrowReleases: 0 },
      messagesSent: { month: 0, total: 0, emails: 0, channelMessages: 0, webhookMessages: 0 },
    });
  });

  it('growth is 0% from nothing to nothing and N/A from nothing to something', () => {
    expect(growth(0, 0)).toBe('0%');
    expect(growth(5, 0)).toBe('N/A');
    expect(growth(0, 5)).toBe('-100%');
    expect(growth(15, 10)).toBe('+50%');
  });
});

describe("another user's metrics", () => {
  it.each(['historical', 'performance', 'summary'])('/%s of another user is 404 with none of their data; an admin may read it', async (what) => {
    const owner = await testSession();
    const intruder = await testSession();
    await sampleAt(owner.userId, HOUR, { cpu: 61.25, messages: 7 });
    await tenant(owner.userId).put({ ...keys.booking(owner.userId, 'secret-booking'), status: 'completed' });

    const res = await get(intruder, `/api/metrics/${owner.userId}/${what}`);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(owner.userId);
    expect(res.text).not.toContain('61.25');
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);

    const own = await get(owner, `/api/metrics/${owner.userId}/${what}`);
    expect(own.status).toBe(200);
    const admin = await get(await testSession({ admin: true }), `/api/metrics/${owner.userId}/${what}`);
    expect(admin.status).toBe(200);
    expect(admin.body).toEqual(own.body);
  });

  it('needs a session', async () => {
    const owner = await testSession();
    expect((await call('GET', `/api/metrics/${owner.userId}/summary`)).status).toBe(401);
  });
});
