/**
 * Failures in the domain's own words, thrown below the HTTP layer (data access, adapters, auth,
 * billing). Each names what kind of failure it is and a machine-readable code; http alone
 * decides which status code and body a kind becomes (http/domain-errors.ts), so nothing
 * below the pipeline needs to know HTTP.
 */
export type FailureKind =
  /** The request cannot be carried out as asked (a bad value, an unknown price, a bad signature). */
  | 'invalid'
  /** Money is needed first: a plan, a subscription, credits. */
  | 'paymentRequired'
  /** The caller is known but may not do this (a failed bot check). */
  | 'forbidden'
  /** The request collides with the state of things (an identity already linked elsewhere). */
  | 'conflict'
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
