import { flushRequestOutcomes, noteRequestOutcome } from '#data/request-outcomes';
import { logger } from '../logger';
import { type PipelineMiddleware, type PipelineRequest, requestIdOf } from './request-state';

/** Request id and structured access log: one line per request with route, status and duration. */
export const requestLogging = (): PipelineMiddleware => ({
  before: (request: PipelineRequest) => {
    request.internal.startedAt = performance.now();
    logger().appendKeys({ requestId: requestIdOf(request.event), route: request.event.routeKey });
  },
  after: (request: PipelineRequest) => logAccess(request),
  onError: (request: PipelineRequest) => logAccess(request),
});

async function logAccess(request: PipelineRequest) {
  const ms = performance.now() - (request.internal.startedAt ?? performance.now());
  const status = request.response?.statusCode;
  logger().info('request', { status, ms: Math.round(ms * 100) / 100 });
  // The public uptime and success rate (data/request-outcomes.ts): a write every so many answers, not one per request.
  // Never on a 503: the table is likely what failed, and the answer must not wait for it once more.
  if (status !== undefined && noteRequestOutcome(status, ms) && status !== 503) {
    await flushRequestOutcomes().catch((err) => logger().warn('could not record request outcomes; kept for the next write', { error: (err as Error).name }));
  }
  logger().removeKeys(['requestId', 'route']);
}
