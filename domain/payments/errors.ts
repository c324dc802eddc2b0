import { DomainError } from '#platform/errors';

/**
 * Domain errors of machine payments. The gateway answers a refusal with 402, a fresh challenge and
 * the `code`; an unreachable chain with 503. Nothing here knows HTTP.
 */
export type RefusalCode =
  | 'MPP_NOT_CONFIGURED'
  | 'MALFORMED_CREDENTIAL'
  | 'UNKNOWN_NONCE'
  | 'EXPIRED'
  | 'ALREADY_USED'
  | 'WRONG_PLUGIN'
  | 'TX_NOT_FOUND'
  | 'TX_REVERTED'
  | 'WRONG_CHAIN'
  | 'NOT_CONFIRMED'
  | 'WRONG_TOKEN'
  | 'WRONG_RECIPIENT'
  | 'AMOUNT_TOO_LOW'
  /** The paying transfer carries no memo bound to this challenge (none, another challenge's, another realm's). */
  | 'PAYMENT_NOT_BOUND'
  /** The paying transaction was mined before the challenge was issued. */
  | 'PAYMENT_BEFORE_CHALLENGE'
  /** A drafts' credential echoing another realm, payment method or intent than the challenge's. */
  | 'WRONG_REALM'
  | 'WRONG_METHOD'
  | 'WRONG_INTENT'
  /** A signed transaction for the server to broadcast: only push mode (a transaction hash) is offered. */
  | 'PULL_MODE_UNSUPPORTED'
  /** A prepaid card receipt (gateway card path) that was never issued, or whose payment is not confirmed yet. */
  | 'UNKNOWN_RECEIPT';

export class PaymentRefusedError extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
  }
}

/** The chain's RPC did not answer in time or failed: nothing can be proven either way. */
export class ChainUnavailableError extends DomainError {
  /** Why, for the logs; the client is told only to retry. */
  constructor(readonly reason: string) {
    super('unavailable', 'the payment chain cannot be reached; retry shortly', 'CHAIN_UNAVAILABLE');
  }
}
