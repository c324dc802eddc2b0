import type { ErrorShape } from '#contract/route';
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

/** The `type` of an OpenAI error body, by status, as OpenAI's API and its SDKs name them. */
function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The field an OpenAI client should fix: the one the failure names, the first validation issue's path (`messages.0.role`), or the model. */
function openAiParam(http: HttpError): string | null {
  if (typeof http.extra.param === 'string') return http.extra.param;
  const issues = http.extra.issues as { path?: string }[] | undefined;
  const first = issues?.[0]?.path;
  if (first) return first.replace(/^body\./, '');
  if (http.code === 'MODEL_RESTRICTED' || http.code === 'UNKNOWN_MODEL' || http.code === 'NO_MODELS') return 'model';
  return null;
}

/**
 * A failure's body in the shape its group speaks (contract/route.ts `errorShape`): the platform's
 * `{error, code, ...details}`, or OpenAI's `{error: {message, type, code, param, ...details}}`, whose
 * code is the platform's in lower case (OpenAI's own codes are snake case: `model_restricted`).
 */
export function errorBodyOf(http: HttpError, shape: ErrorShape = 'platform', routeFields: Record<string, unknown> = {}): Record<string, unknown> {
  if (shape === 'openai') {
    const { success: _unpaid, ...details } = http.extra;
    return {
      error: {
        ...details,
        message: http.message,
        type: openAiErrorType(http.status),
        code: http.code ? http.code.toLowerCase() : null,
        param: openAiParam(http),
      },
    };
  }
  return { ...routeFields, ...http.extra, error: http.message, ...(http.code ? { code: http.code } : {}) };
}
