/**
 * The pipeline's answer to a failure: what its middleware refuses with (body, auth, CSRF, rate
 * limit, validation, idempotency, deadline) and what http/domain-errors.ts makes of a DomainError.
 * The error handler turns it into the spec's body `{error, code?, ...extra}`; anything else that is
 * thrown becomes a logged 500. Handlers throw DomainError, never this.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The pipeline's own refusal of an operation a group declares but does not implement. */
export const notImplemented = () => new HttpError(501, 'not implemented', 'NOT_IMPLEMENTED');
