import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId } from './common';
import { defineGroup, lazySchema } from './route';
import { frequencyMinutes, HEARTBEAT_MAX_MINUTES, HEARTBEAT_MIN_MINUTES } from './heartbeat-frequency';

export { frequencyMinutes, HEARTBEAT_DEFAULTS, HEARTBEAT_MAX_MINUTES, HEARTBEAT_MIN_MINUTES } from './heartbeat-frequency';

const Count = lazySchema(() => z.number().check(z.int(), z.nonnegative()));
const Percent = lazySchema(() => z.number().check(z.minimum(0), z.maximum(100)));
const PercentString = lazySchema(() => z.string().check(z.regex(/^\d+(\.\d+)?%$/, 'must be a percentage such as `99.5%`')));

export const PlatformMetricsBody = lazySchema(() =>
  z.strictObject({
    metrics: z.strictObject({
      agents: z.strictObject({ total: Count(), active: Count(), inactive: Count(), failed: Count() }),
      messages: z.strictObject({ today: Count(), thisWeek: Count(), thisMonth: Count() }),
      deployments: z.strictObject({ total: Count(), successful: Count(), failed: Count() }),
      uptime: z.strictObject({ platformUptime: Percent(), averageAgentUptime: Percent() }),
      performance: z.strictObject({
        averageResponseTime: z.number().check(z.nonnegative(), z.describe('milliseconds')),
        successRate: PercentString(),
        errorRate: PercentString(),
      }),
      storage: z.strictObject({
        used: z.number().check(z.nonnegative(), z.describe('MB')),
        total: z.number().check(z.nonnegative(), z.describe('MB')),
        percentUsed: z.number().check(z.nonnegative(), z.describe('percent of the quota; above 100 when the table outgrew it')),
      }),
    }),
    timestamp: IsoDate(),
    status: z.literal('ok'),
  }),
);

export const METRICS_RANGES = ['24h', '7d', '30d'] as const;
export const MetricsRange = lazySchema(() => z.enum(METRICS_RANGES));

const MetricsSample = lazySchema(() =>
  z.strictObject({
    cpu: z.nullable(Percent()).check(z.describe('null when the instance did not answer its stats at that heartbeat')),
    memory: z.nullable(Percent()).check(z.describe('percent of the instance memory limit; null when it did not answer')),
    messages: Count().check(z.describe('messages the agents processed since the previous heartbeat')),
    errors: Count().check(z.describe('of those, the ones that ended in an error')),
  }),
);

export const HistoricalMetricsBody = lazySchema(() =>
  z.strictObject({
    userId: z.string(),
    timeRange: MetricsRange(),
    metrics: z.array(z.extend(MetricsSample(), { timestamp: IsoDate() })),
    averages: z
      .strictObject({ cpu: Percent(), memory: Percent(), messages: z.number().check(z.nonnegative()), errors: z.number().check(z.nonnegative()) })
      .check(z.describe('means over the samples in the range (cpu and memory over the measured ones); 0 when there are none')),
  }),
);

export const PerformanceMetricsBody = lazySchema(() =>
  z.strictObject({
    cpu: Percent(),
    memory: Percent(),
    errorRate: Percent(),
    responseTime: z.number().check(z.nonnegative(), z.describe('milliseconds')),
  }),
);

const Growth = lazySchema(() => z.string().check(z.describe('change over the previous period, e.g. `+12.5%`')));

export const MetricsSummaryBody = lazySchema(() =>
  z.strictObject({
    revenue: z.strictObject({ month: z.string(), total: z.string(), change: z.string() }),
    bookings: z.strictObject({ completed: Count(), pending: Count(), conversion: z.string() }),
    fans: z.strictObject({
      total: Count(),
      active: Count(),
      growth: Growth(),
      segmentation: z.strictObject({ superfans: Count(), casual: Count(), new: Count() }),
    }),
    streams: z.strictObject({ monthlyListeners: Count(), monthlyStreams: Count(), growth: Growth() }),
    skills: z.strictObject({ active: Count(), total: Count(), growth: Growth() }),
    moneyMoved: z
      .strictObject({
        month: z.string().check(z.describe('this calendar month (UTC), USD, e.g. `$1,250.00`')),
        total: z.string(),
        transfers: Count().check(z.describe('usdc-payments transfers confirmed on chain')),
        splitPayments: Count().check(z.describe('instant-split payments confirmed on chain (one per recipient)')),
        escrowReleases: Count().check(z.describe('booking-settlement escrows released')),
      })
      .check(z.describe('money the skills moved on the account’s behalf (stablecoin amounts count as USD)')),
    messagesSent: z
      .strictObject({
        month: Count(),
        total: Count(),
        emails: Count().check(z.describe('emails the email service accepted')),
        channelMessages: Count().check(z.describe('messages sent through a messaging app (chat-bot, community-bot, business-messaging…)')),
        webhookMessages: Count().check(z.describe('webhook skill messages queued for signed delivery')),
      })
      .check(z.describe('outbound messages the skills sent on the account’s behalf')),
  }),
);

/** `3h`, `30m`, `1d`: a count and a unit (minutes, hours, days), between 5m and 30d. */
export const HeartbeatFrequency = lazySchema(() =>
  z.string().check(
    z.maxLength(8),
    z.regex(/^[1-9]\d*[mhd]$/, { message: 'must be a whole number followed by m, h or d, e.g. `30m`, `3h`, `1d`', abort: true }),
    z.refine((f) => {
      const minutes = frequencyMinutes(f);
      return minutes !== undefined && minutes >= HEARTBEAT_MIN_MINUTES && minutes <= HEARTBEAT_MAX_MINUTES;
    }, 'must be between 5m and 30d'),
  ),
);

/** Idle auto-stop: minutes without activity before the sweeper stops the instance, at most a week. */
const IdleStopMinutes = lazySchema(() => z.int().check(z.minimum(0), z.maximum(7 * 24 * 60)));

const HeartbeatSettings = lazySchema(() =>
  z.strictObject({
    frequency: HeartbeatFrequency(),
    enabled: z.boolean(),
    lastHeartbeat: z.nullable(IsoDate()).check(z.describe('null before the first heartbeat')),
    nextHeartbeat: z.nullable(IsoDate()).check(z.describe('null while disabled')),
    idleStopMinutes: z
      .nullable(IdleStopMinutes())
      .check(z.describe("idle auto-stop: null = the plan's default (label 30, solo 60, collective 240, network 0); 0 = never")),
  }),
);

const UserIdParams = lazySchema(() => z.strictObject({ userId: ResourceId() }));
const userIdNote = "Only the caller's own userId is answered (an admin may read any); another user's id is 404, never their data.";

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
      description:
        'Read from counters kept in the same writes that change agents and deployments (never a scan of agents). agents.active = running, ' +
        'failed = error, inactive = the rest (stopped, provisioning). messages: UTC day, ISO week (from Monday) and calendar month. ' +
        "platformUptime and performance come from the API's own answers of the last 24 hours, counted per minute by the functions: " +
        'platformUptime = minutes in which most answers were not 5xx, of the minutes with answers; successRate / errorRate = answers that were ' +
        'not / were 5xx; averageResponseTime = mean time the functions took to answer (ms). averageAgentUptime = heartbeat checks of the last ' +
        '30 days that found the running instance healthy (the heartbeat is on by default, every 3h). 0 / `0%` when there were none. ' +
        'storage: the table size DynamoDB reports (refreshed by AWS about every six hours) against the configured quota.',
      responses: () => ({
        ...commonErrorResponses(),
        200: PlatformMetricsBody(),
        500: z.strictObject({ error: z.literal('Failed to fetch metrics'), metrics: z.strictObject({}) }),
      }),
    },
    {
      operation: 'getHistoricalMetrics',
      method: 'GET',
      path: '/api/metrics/{userId}/historical',
      auth: 'session',
      summary: "Samples of the user's CPU, memory, messages and errors over a time range, with their averages.",
      description: userIdNote,
      params: UserIdParams,
      query: () => z.object({ range: z._default(MetricsRange(), '24h') }),
      responses: () => ({ 200: HistoricalMetricsBody(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'getPerformanceMetrics',
      method: 'GET',
      path: '/api/metrics/{userId}/performance',
      auth: 'session',
      summary: "The user's current CPU, memory and error rate (percent) and response time (ms).",
      description:
        userIdNote +
        ' cpu and memory from the newest measured heartbeat sample; errorRate and responseTime over the newest 12 samples; zeros when there are none.',
      params: UserIdParams,
      responses: () => ({ 200: PerformanceMetricsBody(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'getMetricsSummary',
      method: 'GET',
      path: '/api/metrics/{userId}/summary',
      auth: 'session',
      summary: "The user's dashboard summary: revenue, bookings, fans, streams and skills.",
      description:
        userIdNote +
        ' Counted from the records the account stores (installed skills, bookings, fans, monthly streams and revenue); zeros when there are none. ' +
        'Ticket sales (event-ticketing orders) are completed bookings; revenue is USD: royalty statements and USD ticket sales, each counted once. ' +
        'Growth and change compare this calendar month (UTC) with the previous one: `0%` when both are zero, `N/A` when only the previous is. ' +
        '`moneyMoved` and `messagesSent` (issue 13) come from monthly counters written in the same transaction as each confirmed transfer or split payment, released escrow, sent email, channel message and queued webhook message, so they always match a recount of those records.',
      params: UserIdParams,
      responses: () => ({ 200: MetricsSummaryBody(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'getHeartbeat',
      method: 'GET',
      path: '/api/heartbeat',
      auth: 'session',
      summary: "The caller's heartbeat settings.",
      description: 'Defaults until first saved: frequency `3h`, disabled.',
      responses: () => ({ 200: z.strictObject({ heartbeat: HeartbeatSettings(), message: z.string() }), ...commonErrorResponses() }),
    },
    {
      operation: 'updateHeartbeat',
      method: 'POST',
      path: '/api/heartbeat',
      auth: 'session',
      summary: 'Change the heartbeat frequency or switch it on or off; the next heartbeat is rescheduled.',
      description:
        'Fields left out keep their stored value (defaults: `3h`, disabled). Frequencies are `<n>m`, `<n>h` or `<n>d`, from 5m to 30d. ' +
        'Switching on makes the first heartbeat due at once; a new frequency while on reschedules to the last heartbeat plus the new ' +
        'frequency (at once if that is past). Each heartbeat checks the running instance, records a metrics sample and marks an ' +
        'unhealthy instance (and so its agents) `error`. `idleStopMinutes` sets idle auto-stop (null: back to the plan default; 0: never): ' +
        'a running instance without a message, scheduled run, A2A message or skill call for that long is stopped with reason `idle`.',
      body: () =>
        z.strictObject({
          frequency: z.optional(HeartbeatFrequency()),
          enabled: z.optional(z.boolean()),
          idleStopMinutes: z.optional(z.nullable(IdleStopMinutes())),
        }),
      example: { frequency: '3h', enabled: true },
      responses: () => ({
        200: z.extend(HeartbeatSettings(), { lastUpdated: IsoDate(), message: z.string() }),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'resetHeartbeat',
      method: 'DELETE',
      path: '/api/heartbeat',
      auth: 'session',
      summary: 'Reset the heartbeat settings to their defaults.',
      description: 'Back to `3h`, disabled, idle auto-stop at the plan default; lastHeartbeat is kept as history.',
      responses: () => ({ 200: z.strictObject({ success: z.literal(true), message: z.string() }), ...commonErrorResponses() }),
    },
  ],
});
