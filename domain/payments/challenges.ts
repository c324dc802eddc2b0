import { randomBytes } from 'node:crypto';
import { payMppChallenge, readMppChallenge, takePaidMppChallengeLease } from '#data/mpp-challenges';
import { newLease } from '#data/serve-lease';
import { issueSingleUse } from '#data/single-use';
import { ConditionFailedError } from '#data/failures';
import { PaymentRefusedError } from './errors';

/**
 * MPP challenges and their redemption, all settled by DynamoDB conditions (never read-then-write):
 *
 *   open ──(payment proven; nonce consumed + TXHASH recorded in ONE transaction)──► paid ──(plugin served)──► served
 *
 * A `paid` challenge whose plugin failed keeps its payment: the same credential may claim it again
 * until one serve succeeds, under the serve lease of data/serve-lease.ts. The TXHASH record is
 * kept for good.
 */

export interface ChallengeBinding {
  plugin: string;
  /** Decimal price in the token, as shown to the client. */
  amount: string;
  /** The same price in the token's base units (decimal integer string). */
  baseUnits: string;
  /** Token contract and recipient, lower case. */
  currency: string;
  recipient: string;
  chainId: number;
  /** The challenge's protection space; its fingerprint is part of the memo that binds a payment. */
  realm: string;
}

export interface ChallengeRecord extends ChallengeBinding {
  nonce: string;
  status: 'open' | 'paid' | 'served';
  /** Epoch ms of issue: a payment must be mined after it. */
  issuedAt: number;
  /** Epoch ms after which an open challenge can no longer be paid. */
  challengeExpiresAt: number;
  txHash?: string;
  /** The address that paid (the transaction's sender). */
  payer?: string;
  leaseUntil?: number;
  leaseId?: string;
}

/** TTL is late (up to days), so expiry is always checked on read too; this is only clean-up. */
const TTL_GRACE_SECONDS = 3600;

const seconds = (ms: number) => Math.ceil(ms / 1000);

export async function issueChallenge(binding: ChallengeBinding, ttlSeconds: number, now = Date.now()): Promise<ChallengeRecord> {
  const nonce = randomBytes(16).toString('base64url');
  const record: ChallengeRecord = { ...binding, nonce, status: 'open', issuedAt: now, challengeExpiresAt: now + ttlSeconds * 1000 };
  await issueSingleUse('mppChallenge', nonce, { ...record, createdAt: new Date(now).toISOString() }, seconds(record.challengeExpiresAt) + TTL_GRACE_SECONDS);
  return record;
}

export const readChallenge = (nonce: string) => readMppChallenge<ChallengeRecord>(nonce);

export { txHashUsed } from '#data/mpp-challenges';

const alreadyUsed = () => new PaymentRefusedError('ALREADY_USED', 'this payment or challenge has already been used');

/**
 * The proven payment is spent: in one transaction the open, unexpired challenge becomes `paid` by
 * this hash (with a serve lease for the caller) and the hash is recorded as used. Of any number of
 * parallel submissions, exactly one gets the lease; the others are refused ALREADY_USED.
 */
export async function consumeChallenge(challenge: ChallengeRecord, txHash: string, payer: string, now = Date.now()): Promise<string> {
  const { leaseId, leaseUntil } = newLease(now);
  try {
    await payMppChallenge(challenge.nonce, { txHash, payer, plugin: challenge.plugin, chainId: challenge.chainId, leaseId, leaseUntil }, now);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw alreadyUsed();
    throw err;
  }
  return leaseId;
}

/** A paid challenge whose earlier serve failed (or died): the same credential takes a fresh lease. */
export async function reclaimPaidChallenge(challenge: ChallengeRecord, txHash: string, now = Date.now()): Promise<string> {
  const leaseId = await takePaidMppChallengeLease(challenge.nonce, txHash, now);
  if (!leaseId) throw alreadyUsed();
  return leaseId;
}
