import { DomainError, type FailureHints, type FailureKind } from '#platform/errors';
import { HttpError } from './errors';

/** The one table from a domain failure's kind to its status code. */
export const STATUS_OF_KIND: Readonly<Record<FailureKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  paymentRequired: 402,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  gone: 410,
  unprocessable: 422,
  limitReached: 429,
  internal: 500,
  upstreamFailed: 502,
  unavailable: 503,
};

/** A failure's hints as response headers, the same for every kind. */
function headersOf(hints: FailureHints): Record<string, string> {
  const headers: Record<string, string> = {};
  if (hints.retryAfterSeconds !== undefined) headers['retry-after'] = String(hints.retryAfterSeconds);
  return headers;
}

/**
 * Any failure thrown below the pipeline as the HTTP answer it stands for: `{error, code, ...details}`
 * with the status of its kind. Undefined for errors that are not domain failures (bugs: a logged 500).
 */
export function httpErrorOf(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError) return new HttpError(STATUS_OF_KIND[err.kind], err.message, err.code, err.details, headersOf(err.hints));
  return undefined;
}
