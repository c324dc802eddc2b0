import * as z from 'zod';
import { ResourceId } from './memory';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate } from './route';

const Count = z.number().int().nonnegative();
const Percent = z.number().min(0).max(100);
const PercentString = z.string().regex(/^\d+(\.\d+)?%$/, 'must be a percentage such as `99.5%`');

export const PlatformMetricsBody = z.strictObject({
  metrics: z.strictObject({
    agents: z.strictObject({ total: Count, active: Count, inactive: Count, failed: Count }),
    messages: z.strictObject({ today: Count, thisWeek: Count, thisMonth: Count }),
    deployments: z.strictObject({ total: Count, successful: Count, failed: Count }),
    uptime: z.strictObject({ platformUptime: Percent, averageAgentUptime: Percent }),
    performance: z.strictObject({
      averageResponseTime: z.number().nonnegative().describe('milliseconds'),
      successRate: PercentString,
      errorRate: PercentString,
    }),
    storage: z.strictObject({
      used: z.number().nonnegative().describe('MB'),
      total: z.number().nonnegative().describe('MB'),
      percentUsed: Percent,
    }),
  }),
  timestamp: IsoDate,
  status: z.literal('ok'),
});

export const METRICS_RANGES = ['24h', '7d', '30d'] as const;
export const MetricsRange = z.enum(METRICS_RANGES);

const MetricsSample = z.strictObject({ cpu: Percent, memory: Percent, messages: Count, errors: Count });

export const HistoricalMetricsBody = z.strictObject({
  userId: z.string(),
  timeRange: MetricsRange,
  metrics: z.array(MetricsSample.extend({ timestamp: IsoDate })),
  averages: z.strictObject({ cpu: Percent, memory: Percent, messages: z.number().nonnegative(), errors: z.number().nonnegative() }),
});

export const PerformanceMetricsBody = z.strictObject({
  cpu: Percent,
  memory: Percent,
  errorRate: Percent,
  responseTime: z.number().nonnegative().describe('milliseconds'),
});

const Growth = z.string().describe('change over the previous period, e.g. `+12.5%`');

export const MetricsSummaryBody = z.strictObject({
  revenue: z.strictObject({ month: z.string(), total: z.string(), change: z.string() }),
  bookings: z.strictObject({ completed: Count, pending: Count, conversion: z.string() }),
  fans: z.strictObject({
    total: Count,
    active: Count,
    growth: Growth,
    segmentation: z.strictObject({ superfans: Count, casual: Count, new: Count }),
  }),
  streams: z.strictObject({ monthlyListeners: Count, monthlyStreams: Count, growth: Growth }),
  skills: z.strictObject({ active: Count, total: Count, growth: Growth }),
});

/** `3h`, `30m`, `1d`: a count and a unit (minutes, hours, days). */
export const HeartbeatFrequency = z.string().max(8).regex(/^\d+[mhd]$/, 'must be a number followed by m, h or d, e.g. `3h`');

const HeartbeatSettings = z.strictObject({
  frequency: HeartbeatFrequency,
  enabled: z.boolean(),
  lastHeartbeat: IsoDate.nullable().describe('null before the first heartbeat'),
  nextHeartbeat: IsoDate.nullable().describe('null while disabled'),
});

const UserIdParams = z.strictObject({ userId: ResourceId });
const userIdNote = 'Only the caller\'s own userId is answered; any other id is 404.';

export const metricsContract = defineGroup({
  group: 'metrics',
  description: 'Platform metrics, per-user metrics and heartbeat settings (spec 4.10).',
  dynamoOnly: true,
  routes: [
    {
      operation: 'getPlatformMetrics',
      method: 'GET',
      path: '/api/metrics',
      auth: 'none',
      summary: 'Platform-wide figures: agents, messages, deployments, uptime, performance and storage.',
      responses: {
        ...commonErrorResponses,
        200: PlatformMetricsBody,
        500: z.strictObject({ error: z.literal('Failed to fetch metrics'), metrics: z.strictObject({}) }),
      },
    },
    {
      operation: 'getHistoricalMetrics',
      method: 'GET',
      path: '/api/metrics/{userId}/historical',
      auth: 'session',
      summary: "Samples of the user's CPU, memory, messages and errors over a time range, with their averages.",
      description: userIdNote,
      params: UserIdParams,
      query: z.object({ range: MetricsRange.default('24h') }),
      responses: { 200: HistoricalMetricsBody, 404: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'getPerformanceMetrics',
      method: 'GET',
      path: '/api/metrics/{userId}/performance',
      auth: 'session',
      summary: "The user's current CPU, memory and error rate (percent) and response time (ms).",
      description: userIdNote,
      params: UserIdParams,
      responses: { 200: PerformanceMetricsBody, 404: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'getMetricsSummary',
      method: 'GET',
      path: '/api/metrics/{userId}/summary',
      auth: 'session',
      summary: "The user's dashboard summary: revenue, bookings, fans, streams and skills.",
      description: userIdNote,
      params: UserIdParams,
      responses: { 200: MetricsSummaryBody, 404: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'getHeartbeat',
      method: 'GET',
      path: '/api/heartbeat',
      auth: 'session',
      summary: "The caller's heartbeat settings.",
      responses: { 200: z.strictObject({ heartbeat: HeartbeatSettings, message: z.string() }), ...commonErrorResponses },
    },
    {
      operation: 'updateHeartbeat',
      method: 'POST',
      path: '/api/heartbeat',
      auth: 'session',
      summary: 'Change the heartbeat frequency or switch it on or off; the next heartbeat is rescheduled.',
      body: z.strictObject({ frequency: HeartbeatFrequency.optional(), enabled: z.boolean().optional() }),
      example: { frequency: '3h', enabled: true },
      responses: {
        200: HeartbeatSettings.extend({ lastUpdated: IsoDate, message: z.string() }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'resetHeartbeat',
      method: 'DELETE',
      path: '/api/heartbeat',
      auth: 'session',
      summary: 'Reset the heartbeat settings to their defaults.',
      responses: { 200: z.strictObject({ success: z.literal(true), message: z.string() }), ...commonErrorResponses },
    },
  ],
});
