import { config } from '#platform/config';
import { consumeRateLimit, rateLimitSubject } from '../rate-limit';
import { type PipelineRequest, routeOf } from './request-state';

/** The route's rate-limit scope, counted per user or per address as its rule says (429 once used up). */
export async function applyRateLimit(request: PipelineRequest): Promise<void> {
  const scope = routeOf(request).rateLimit;
  if (!scope) return;
  const rule = config().rateLimits[scope]!;
  await consumeRateLimit(scope, rateLimitSubject(rule, request.internal.ip!, request.internal.auth?.userId));
}
