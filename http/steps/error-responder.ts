import { ConditionFailedError, InvalidCursorError, isDatabaseUnavailable } from '#data/failures';
import type { ErrorShape } from '#contract/route';
import { errorBodyOf, httpErrorOf } from '../domain-errors';
import { HttpError } from '../errors';
import { logger } from '../logger';
import { type PipelineMiddleware, type PipelineRequest, requestIdOf } from './request-state';
import { toResult } from './result';

/** When a client should retry after the database failed to answer in time. */
const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/** Last line of defence: every failure becomes `{error, code?}` (or the group's `errorShape`); no stack trace ever leaves. */
export const errorResponder = (shape: ErrorShape = 'platform'): PipelineMiddleware => ({
  onError: (request: PipelineRequest) => {
    const err = request.error;
    const requestId = requestIdOf(request.event);
    const routeFields = request.internal.route?.errorFields ?? {};
    let http: HttpError;
    const known = httpErrorOf(err);
    if (known) http = known;
    else if (err instanceof InvalidCursorError) http = new HttpError(400, 'invalid cursor', 'INVALID_CURSOR');
    else if (err instanceof ConditionFailedError) http = new HttpError(409, 'conflicting change, try again', 'CONFLICT');
    else if (isDatabaseUnavailable(err)) {
      // Not a bug: the table did not answer within its budget (data/client.ts). Retryable.
      logger().warn('database unavailable', { error: (err as Error).name, code: (err as { code?: string }).code });
      http = new HttpError(
        503,
        'the service is briefly unavailable; retry shortly',
        'BACKEND_UNAVAILABLE',
        {},
        { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
      );
    } else {
      logger().error('unhandled error', err as Error);
      http = new HttpError(500, 'internal error', 'INTERNAL');
    }
    if (http.status >= 500 && known) logger().warn('server-side failure', { status: http.status, code: http.code });
    const body = errorBodyOf(http, shape, routeFields);
    request.response = toResult(http.status, body, requestId, http.headers);
  },
});
