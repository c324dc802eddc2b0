import { PAYMENT_CODE_PROBLEMS, PAYMENT_PROBLEM_BASE, PAYMENT_PROBLEMS, type GatewayPaymentCode } from '#contract/gateway';
import { canonicalJson } from '#domain/payments/canonical-json';
import { MPP_INTENT, MPP_METHOD } from '#domain/payments/credential';

/**
 * The wire form of a charge challenge (draft-httpauth-payment-00, draft-tempo-charge-00): one
 * `WWW-Authenticate: Payment` challenge carrying the spec's `amount`, `currency` and `recipient` first
 * (a client reading the spec's form finds them where it did) and the drafts' parameters after them
 * (parsers of either skip what they do not know), and the RFC 9457 fields of the 402 body.
 */
export interface ChargeChallenge {
  id: string;
  realm: string;
  /** Decimal price in the token, as the spec shows it. */
  amount: string;
  baseUnits: string;
  /** EIP-55 addresses. */
  currency: string;
  recipient: string;
  chainId: number;
  memo: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * The drafts' `request`: the amount in base units, and only push mode while the gateway does not
 * broadcast transactions itself (pull mode would have it sign for, submit and pay for the client's
 * transaction; push leaves it reading the chain only).
 */
export const chargeRequest = (c: ChargeChallenge) => ({
  amount: c.baseUnits,
  currency: c.currency,
  recipient: c.recipient,
  methodDetails: { chainId: c.chainId, memo: c.memo, supportedModes: ['push'] },
});

const quoted = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export function paymentChallengeHeader(c: ChargeChallenge): string {
  const request = Buffer.from(canonicalJson(chargeRequest(c))).toString('base64url');
  return [
    `Payment amount=${c.amount}`,
    `currency=${c.currency}`,
    `recipient=${c.recipient}`,
    `id=${quoted(c.id)}`,
    `realm=${quoted(c.realm)}`,
    `method=${quoted(MPP_METHOD)}`,
    `intent=${quoted(MPP_INTENT)}`,
    `request=${quoted(request)}`,
    `expires=${quoted(new Date(c.expiresAt).toISOString())}`,
  ].join(', ');
}

/** The RFC 9457 members of a 402: the problem type of `code`, its title, and the fresh challenge's id. */
export function paymentProblem(code: GatewayPaymentCode, detail: string, challengeId: string | null) {
  const problem = PAYMENT_CODE_PROBLEMS[code];
  return { type: `${PAYMENT_PROBLEM_BASE}${problem}`, title: PAYMENT_PROBLEMS[problem], status: 402 as const, detail, challengeId };
}
