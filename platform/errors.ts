/**
 * Failures in the domain's own words, thrown below the HTTP layer (data access, adapters, auth,
 * billing). Each names what kind of failure it is and a machine-readable code; http alone
 * decides which status code and body a kind becomes (http/domain-errors.ts), so nothing
 * below the pipeline needs to know HTTP.
 */
export type FailureKind =
  /** The request cannot be carried out as asked (a bad value, an unknown price, a bad signature). */
  | 'invalid'
  /** The caller has not shown who they are, or what they showed is not valid. */
  | 'unauthenticated'
  /** Money is needed first: a plan, a subscription, credits. */
  | 'paymentRequired'
  /** The caller is known but may not do this (a failed bot check). */
  | 'forbidden'
  /** What the request names does not exist for this caller. */
  | 'notFound'
  /** The request collides with the state of things (an identity already linked elsewhere). */
  | 'conflict'
  /** A limit of the plan or of the platform is reached (agents, channels, messages a day). */
  | 'limitReached'
  /** A service the platform depends on is not configured or not reachable right now. */
  | 'unavailable'
  /** An outside service answered, but with a failure. */
  | 'upstreamFailed';

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly code: string,
    /** Fields the client needs besides the message, e.g. `{current, limit}` or `{plan}`. */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Shorthands for the failures the domain throws most, each of its kind. */
export const invalid = (message: string, code = 'BAD_REQUEST', details?: Record<string, unknown>) => new DomainError('invalid', message, code, details);
export const unauthenticated = (message: string, code: string) => new DomainError('unauthenticated', message, code);
export const forbidden = (message: string, code = 'FORBIDDEN', details?: Record<string, unknown>) => new DomainError('forbidden', message, code, details);
export const notFound = (message = 'not found') => new DomainError('notFound', message, 'NOT_FOUND');
export const conflict = (message: string, code = 'CONFLICT', details?: Record<string, unknown>) => new DomainError('conflict', message, code, details);
export const limitReached = (message: string, code: string, details?: Record<string, unknown>) => new DomainError('limitReached', message, code, details);
