import {
  AiError,
  InsufficientCreditsAiError,
  ModelRequestError,
  ModelRestrictedError,
  NoModelAvailableError,
  PlanRequiredError,
  ProviderFailureError,
  UnknownModelError,
} from '../ai/errors';
import { HttpError } from './errors';

/**
 * The model layer's domain errors as HTTP answers (spec 4.11 and 7): payment problems are 402 and
 * a model outside the plan 403, with `{success: false, error, code}` (plus `allowedModels`);
 * provider failures are the spec's 500 with a code that says which.
 */
export function aiErrorToHttp(err: unknown): HttpError | undefined {
  if (!(err instanceof AiError)) return undefined;
  const paid = { success: false };
  if (err instanceof PlanRequiredError || err instanceof InsufficientCreditsAiError) return new HttpError(402, err.message, err.code, paid);
  if (err instanceof ModelRestrictedError) return new HttpError(403, err.message, err.code, { ...paid, allowedModels: [...err.allowedModels] });
  if (err instanceof UnknownModelError || err instanceof NoModelAvailableError) return new HttpError(404, err.message, err.code);
  if (err instanceof ModelRequestError) return new HttpError(400, err.message, err.code);
  if (err instanceof ProviderFailureError) return new HttpError(500, err.message, err.code);
  return new HttpError(500, err.message, err.code);
}
