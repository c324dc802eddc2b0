import { config } from '../../shared/config';
import { readPlatformCounters } from '../../shared/db/agents';
import { sumDaily, tableSizeBytes, utcDay } from '../../shared/db/metrics';

/** Uptime and performance are taken over the heartbeat checks of this many days (samples live 35). */
export const PERFORMANCE_WINDOW_DAYS = 30;

const HEARTBEAT_FIELDS = ['checks', 'reachable', 'healthy', 'messages', 'errors', 'responseMsTotal', 'answered'] as const;

const DAY_MS = 86_400_000;
const round2 = (n: number) => Math.round(n * 100) / 100;
const share = (part: number, whole: number) => (whole > 0 ? round2((Math.min(part, whole) / whole) * 100) : 0);
const percentText = (part: number, whole: number) => `${whole > 0 ? share(part, whole) : 0}%`;

/** Monday 00:00 UTC of the ISO week of `now`. */
const weekStart = (now: Date) => {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY_MS);
};
const monthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));

async function messageFigures(now: Date) {
  const today = utcDay(now);
  const week = utcDay(weekStart(now));
  const month = utcDay(monthStart(now));
  const from = week < month ? week : month;
  const perDay = await sumDaily('messages', ['count'], from, today);
  const total = (fromDay: string) => [...perDay].reduce((n, [day, v]) => (day >= fromDay && day <= today ? n + v.count : n), 0);
  return { today: total(today), thisWeek: total(week), thisMonth: total(month) };
}

async function heartbeatFigures(now: Date) {
  const from = utcDay(new Date(now.getTime() - (PERFORMANCE_WINDOW_DAYS - 1) * DAY_MS));
  const perDay = await sumDaily('heartbeat', HEARTBEAT_FIELDS, from, utcDay(now));
  const t = Object.fromEntries(HEARTBEAT_FIELDS.map((f) => [f, 0])) as Record<(typeof HEARTBEAT_FIELDS)[number], number>;
  for (const day of perDay.values()) for (const f of HEARTBEAT_FIELDS) t[f] += day[f];
  return {
    uptime: { platformUptime: share(t.reachable, t.checks), averageAgentUptime: share(t.healthy, t.checks) },
    performance: {
      averageResponseTime: t.answered > 0 ? Math.round(t.responseMsTotal / t.answered) : 0,
      successRate: percentText(t.messages - t.errors, t.messages),
      errorRate: percentText(t.errors, t.messages),
    },
  };
}

async function storageFigures() {
  const usedMb = round2((await tableSizeBytes()) / (1024 * 1024));
  const totalMb = config().metricsStorageQuotaMb;
  return { used: usedMb, total: totalMb, percentUsed: round2((usedMb / totalMb) * 100) };
}

/** Spec 4.10 `GET /api/metrics`: every figure from maintained counters and the table's own size. */
export async function platformMetrics(now = new Date()) {
  const [counters, messages, beats, storage] = await Promise.all([readPlatformCounters(), messageFigures(now), heartbeatFigures(now), storageFigures()]);
  const a = counters.agents;
  const clamp = (n: number) => Math.max(0, n);
  return {
    metrics: {
      agents: {
        total: clamp(a.total),
        active: clamp(a.running),
        inactive: clamp(a.stopped + a.provisioning),
        failed: clamp(a.error),
      },
      messages,
      deployments: { total: clamp(counters.deployments.total), successful: clamp(counters.deployments.successful), failed: clamp(counters.deployments.failed) },
      uptime: beats.uptime,
      performance: beats.performance,
      storage,
    },
    timestamp: now.toISOString(),
    status: 'ok' as const,
  };
}

/**
 * The public endpoint's answer, shared for a few seconds per container: it is unauthenticated and
 * each computation reads a few hundred counter items, so a burst of callers must not multiply that.
 */
export const PLATFORM_METRICS_CACHE_MS = 10_000;
let cached: { at: number; value: Promise<Awaited<ReturnType<typeof platformMetrics>>> } | undefined;

export function cachedPlatformMetrics(now = Date.now()) {
  if (!cached || now - cached.at >= PLATFORM_METRICS_CACHE_MS) {
    const value = platformMetrics(new Date(now));
    cached = { at: now, value };
    // A failure is not kept: the next caller tries again.
    value.catch(() => {
      if (cached?.value === value) cached = undefined;
    });
  }
  return cached.value.then((m) => ({ ...m, timestamp: new Date(now).toISOString() }));
}

export const clearPlatformMetricsCache = () => {
  cached = undefined;
};
