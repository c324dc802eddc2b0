/**
 * Failures in the domain's own words, thrown below the HTTP layer (data access, adapters, auth,
 * billing). Each names what kind of failure it is and a machine-readable code; http alone
 * decides which status code and body a kind becomes (http/domain-errors.ts), so nothing
 * below the pipeline needs to know HTTP.
 */
export const FAILURE_KINDS = [
  /** The request cannot be carried out as asked (a bad value, an unknown price, a bad signature). */
  'invalid',
  /** The caller has not shown who they are, or what they showed is not valid. */
  'unauthenticated',
  /** Money is needed first: a plan, a subscription, credits. */
  'paymentRequired',
  /** The caller is known but may not do this (a failed bot check). */
  'forbidden',
  /** What the request names does not exist for this caller. */
  'notFound',
  /** The request collides with the state of things (an identity already linked elsewhere). */
  'conflict',
  /** What the request names existed once and is retired for good (a removed endpoint); not a 404, so clients stop asking. */
  'gone',
  /** The request is well formed but what it rests on does not hold (no pending passkey challenge, an ownership not proven). */
  'unprocessable',
  /** A limit of the plan or of the platform is reached (agents, channels, messages a day). */
  'limitReached',
  /** The platform failed on its own side (misconfigured, or a step of its own broke) where the spec names the failure with a code. */
  'internal',
  /** A service the platform depends on is not configured or not reachable right now. */
  'unavailable',
  /** An outside service answered, but with a failure. */
  'upstreamFailed',
] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What a failure tells the client besides its body, whatever its kind. */
export interface FailureHints {
  /** When trying again can succeed (a rate limit's window); http sends it as `Retry-After`. */
  retryAfterSeconds?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** Undefined only where the spec's answer carries no code (the gateway's `no_plugin`). */
    readonly code: string | undefined,
    /** Fields the client needs besides the message, e.g. `{current, limit}` or `{plan}`. */
    readonly details: Record<string, unknown> = {},
    readonly hints: FailureHints = {},
    /** What went wrong underneath (`{cause}`), kept for the logs and never sent to the client. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Shorthands for the failures the domain throws most, each of its kind. */
export const invalid = (message: string, code = 'BAD_REQUEST', details?: Record<string, unknown>) => new DomainError('invalid', message, code, details);
export const unauthenticated = (message: string, code: string) => new DomainError('unauthenticated', message, code);
export const forbidden = (message: string, code = 'FORBIDDEN', details?: Record<string, unknown>) => new DomainError('forbidden', message, code, details);
export const notFound = (message = 'not found') => new DomainError('notFound', message, 'NOT_FOUND');
export const conflict = (message: string, code = 'CONFLICT', details?: Record<string, unknown>) => new DomainError('conflict', message, code, details);
export const limitReached = (message: string, code: string, details?: Record<string, unknown>, hints?: FailureHints) =>
  new DomainError('limitReached', message, code, details, hints);
export const paymentRequired = (message: string, code: string, details?: Record<string, unknown>) => new DomainError('paymentRequired', message, code, details);
export const gone = (message: string, details?: Record<string, unknown>) => new DomainError('gone', message, 'GONE', details);
export const unprocessable = (message: string, code: string, details?: Record<string, unknown>) => new DomainError('unprocessable', message, code, details);
export const internal = (message: string, code: string, details?: Record<string, unknown>, options?: ErrorOptions) =>
  new DomainError('internal', message, code, details, {}, options);
export const upstreamFailed = (message: string, code: string | undefined, details?: Record<string, unknown>, options?: ErrorOptions) =>
  new DomainError('upstreamFailed', message, code, details, {}, options);
export const unavailable = (message: string, code: string, details?: Record<string, unknown>, options?: ErrorOptions) =>
  new DomainError('unavailable', message, code, details, {}, options);
