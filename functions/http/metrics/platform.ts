import { metricsConfig } from '#platform/config';
import { readPlatformCounters } from '#data/agents';
import { sumDaily, tableSizeBytes, utcDay } from '#data/metrics';
import { requestOutcomesBetween } from '#data/request-outcomes';

/** Agent uptime is taken over the heartbeat checks of this many days (samples live 35). */
export const PERFORMANCE_WINDOW_DAYS = 30;
/** The API's uptime and performance are taken over its answers of this many hours (one counter item a minute). */
export const REQUEST_WINDOW_HOURS = 24;
/** A minute in which more than this share of the answers were 5xx counts as down. */
export const DOWN_MINUTE_FAILED_SHARE = 0.5;

const HEARTBEAT_FIELDS = ['checks', 'healthy'] as const;

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

/** Share of the heartbeat checks of running instances that found them healthy. */
async function averageAgentUptime(now: Date) {
  const from = utcDay(new Date(now.getTime() - (PERFORMANCE_WINDOW_DAYS - 1) * DAY_MS));
  const perDay = await sumDaily('heartbeat', HEARTBEAT_FIELDS, from, utcDay(now));
  let checks = 0;
  let healthy = 0;
  for (const day of perDay.values()) {
    checks += day.checks;
    healthy += day.healthy;
  }
  return share(healthy, checks);
}

/**
 * From what the API answered (data/request-outcomes.ts): uptime = the minutes with answers in
 * which most were not 5xx, of all minutes with answers; success and error rate = non-5xx and 5xx
 * answers of all answers; response time = the functions' mean time to answer.
 */
async function requestFigures(now: Date) {
  const minutes = await requestOutcomesBetween(new Date(now.getTime() - REQUEST_WINDOW_HOURS * 3_600_000), now);
  let total = 0;
  let failed = 0;
  let msTotal = 0;
  let observed = 0;
  let down = 0;
  for (const m of minutes.values()) {
    if (m.total <= 0) continue;
    total += m.total;
    failed += m.failed;
    msTotal += m.msTotal;
    observed += 1;
    if (m.failed > m.total * DOWN_MINUTE_FAILED_SHARE) down += 1;
  }
  return {
    platformUptime: share(observed - down, observed),
    performance: {
      averageResponseTime: total > 0 ? Math.round(msTotal / total) : 0,
      successRate: percentText(total - failed, total),
      errorRate: percentText(failed, total),
    },
  };
}

async function storageFigures() {
  const usedMb = round2((await tableSizeBytes()) / (1024 * 1024));
  const totalMb = metricsConfig().storageQuotaMb;
  return { used: usedMb, total: totalMb, percentUsed: round2((usedMb / totalMb) * 100) };
}

/** Spec 4.10 `GET /api/metrics`: every figure from maintained counters and the table's own size. */
export async function platformMetrics(now = new Date()) {
  const [counters, messages, requests, agentUptime, storage] = await Promise.all([
    readPlatformCounters(),
    messageFigures(now),
    requestFigures(now),
    averageAgentUptime(now),
    storageFigures(),
  ]);
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
      uptime: { platformUptime: requests.platformUptime, averageAgentUptime: agentUptime },
      performance: requests.performance,
      storage,
    },
    timestamp: now.toISOString(),
    status: 'ok' as const,
  };
}

/**
 * The public endpoint's answer, shared for a few seconds per container: it is unauthenticated and
 * each computation reads a few hundred daily counter items and up to 1,440 minute items (about 18
 * RCU), so a burst of callers must not multiply that.
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
