import { metricsContract } from '#contract/metrics';
import { logger } from '#http/logger';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { readHeartbeat, resetHeartbeat, updateHeartbeat } from './heartbeat-settings';
import { cachedPlatformMetrics } from './platform';
import { metricsSummary } from './summary';
import { historicalMetrics, performanceMetrics } from './user-metrics';

export const handler = createHandler(metricsContract, {
  getPlatformMetrics: async () => {
    try {
      return await cachedPlatformMetrics();
    } catch (err) {
      logger().error('platform metrics failed', err as Error);
      return reply.json(500, { error: 'Failed to fetch metrics', metrics: {} });
    }
  },
  getHistoricalMetrics: async ({ auth, params, query }) => historicalMetrics(auth, params.userId, query.range),
  getPerformanceMetrics: async ({ auth, params }) => performanceMetrics(auth, params.userId),
  getMetricsSummary: async ({ auth, params }) => metricsSummary(auth, params.userId),
  getHeartbeat: async ({ auth }) => readHeartbeat(auth),
  updateHeartbeat: async ({ auth, body }) => updateHeartbeat(auth, body),
  resetHeartbeat: async ({ auth }) => resetHeartbeat(auth),
});
