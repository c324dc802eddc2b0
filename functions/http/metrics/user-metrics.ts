import type { AuthContext } from '#domain/auth/authenticate';
import type { METRICS_RANGES } from '#contract/metrics';
import { latestSamples, samplesBetween, type MetricSample } from '#data/metrics';
import { notFound } from '#platform/errors';

type Range = (typeof METRICS_RANGES)[number];

const RANGE_MS: Record<Range, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };
/** How many of the newest samples the current performance is taken over (an hour at the shortest frequency). */
export const PERFORMANCE_SAMPLES = 12;

/** A user's metrics are the caller's own, or anyone's for an admin; another user's id reads as missing. */
export function requireSelfOrAdmin(auth: AuthContext, userId: string): string {
  if (userId !== auth.userId && !auth.isAdmin) throw notFound('no metrics for this user');
  return userId;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const mean = (values: number[]) => (values.length ? round2(values.reduce((a, b) => a + b, 0) / values.length) : 0);
const measured = (values: (number | null | undefined)[]) => values.filter((v): v is number => typeof v === 'number');
const answered = (s: Pick<MetricSample, 'messages' | 'errors'>) => Math.max(0, s.messages - s.errors);

export async function historicalMetrics(auth: AuthContext, userId: string, range: Range, now = new Date()) {
  requireSelfOrAdmin(auth, userId);
  const samples = await samplesBetween(userId, new Date(now.getTime() - RANGE_MS[range]), now);
  const metrics = samples.map((s) => ({
    timestamp: s.timestamp,
    cpu: s.cpu ?? null,
    memory: s.memory ?? null,
    messages: Number(s.messages),
    errors: Number(s.errors),
  }));
  return {
    userId,
    timeRange: range,
    metrics,
    averages: {
      cpu: mean(measured(metrics.map((m) => m.cpu))),
      memory: mean(measured(metrics.map((m) => m.memory))),
      messages: mean(metrics.map((m) => m.messages)),
      errors: mean(metrics.map((m) => m.errors)),
    },
  };
}

export async function performanceMetrics(auth: AuthContext, userId: string, now = new Date()) {
  requireSelfOrAdmin(auth, userId);
  const newest = await latestSamples(userId, PERFORMANCE_SAMPLES, now);
  const current = newest.find((s) => typeof s.cpu === 'number' && typeof s.memory === 'number');
  const messages = newest.reduce((n, s) => n + Number(s.messages), 0);
  const errors = newest.reduce((n, s) => n + Number(s.errors), 0);
  const replies = newest.reduce((n, s) => n + answered(s), 0);
  const responseMs = newest.reduce((n, s) => n + Number(s.responseMsTotal ?? 0), 0);
  return {
    cpu: current?.cpu ?? 0,
    memory: current?.memory ?? 0,
    errorRate: messages > 0 ? round2((Math.min(errors, messages) / messages) * 100) : 0,
    responseTime: replies > 0 ? Math.round(responseMs / replies) : 0,
  };
}
