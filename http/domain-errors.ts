import {
  AiError,
  BudgetExceededError,
  InsufficientCreditsAiError,
  ModelRequestError,
  ModelRestrictedError,
  NoModelAvailableError,
  PlanRequiredError,
  ProviderFailureError,
  UnknownModelError,
} from '#domain/ai/errors';
import { DomainError, type FailureHints, type FailureKind } from '#platform/errors';
import { HttpError } from './errors';

/**
 * The model layer's domain errors as HTTP answers (spec 4.11 and 7): payment problems are 402 and
 * a model outside the plan 403, with `{success: false, error, code}` (plus `allowedModels`);
 * provider failures are the spec's 500 with a code that says which.
 */
export function aiErrorToHttp(err: unknown): HttpError | undefined {
  if (!(err instanceof AiError)) return undefined;
  const paid = { success: false };
  if (err instanceof PlanRequiredError || err instanceof InsufficientCreditsAiError || err instanceof BudgetExceededError)
    return new HttpError(402, err.message, err.code, paid);
  if (err instanceof ModelRestrictedError) return new HttpError(403, err.message, err.code, { ...paid, allowedModels: [...err.allowedModels] });
  if (err instanceof UnknownModelError || err instanceof NoModelAvailableError) return new HttpError(404, err.message, err.code);
  if (err instanceof ModelRequestError) return new HttpError(400, err.message, err.code);
  if (err instanceof ProviderFailureError) return new HttpError(500, err.message, err.code);
  return new HttpError(500, err.message, err.code);
}

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
  return aiErrorToHttp(err);
}
