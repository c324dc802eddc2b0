import * as z from 'zod/mini';
import { lazySchema } from './route';

/**
 * The bodies every route group shares, in zod/mini (docs/architecture.md §11: mini schemas cost a
 * fraction of classic ones to build at cold start, and the classic library stays out of the bundle).
 */

/** The spec's error body, `{error, code?}`, plus any extra fields an endpoint table names. */
export const ErrorBody = lazySchema(() =>
  z.looseObject({
    error: z.string(),
    code: z.optional(z.string()),
  }),
);

export const ValidationErrorBody = lazySchema(() =>
  z.object({
    error: z.string(),
    code: z.literal('VALIDATION_ERROR'),
    issues: z.array(z.object({ path: z.string(), message: z.string() })),
  }),
);

export const SuccessTrue = lazySchema(() => z.object({ success: z.literal(true) }));

export const IsoDate = lazySchema(() => z.iso.datetime({ offset: true }));

/** Answers every route may give whatever it does (auth, validation, limits, failures). */
export const commonErrorResponses = lazySchema(
  () =>
    ({
      400: ValidationErrorBody(),
      401: ErrorBody(),
      403: ErrorBody(),
      429: ErrorBody(),
      500: ErrorBody(),
    }) as const,
);

/** Ids the platform generates are URL-safe; anything else is refused before it reaches a key. */
export const ResourceId = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(64), z.regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -')));
