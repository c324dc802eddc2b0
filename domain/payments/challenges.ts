import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#data/client';
import * as keys from '#data/keys';
import { newLease, takeServeLease } from '#data/serve-lease';
import { ConditionFailedError, tx } from '#data/tenant';
import { transactRetrying } from '#data/transact-retry';
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
}

export interface ChallengeRecord extends ChallengeBinding {
  nonce: string;
  status: 'open' | 'paid' | 'served';
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
  const record: ChallengeRecord = { ...binding, nonce, status: 'open', challengeExpiresAt: now + ttlSeconds * 1000 };
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.mppChallenge(nonce),
        ...record,
        createdAt: new Date(now).toISOString(),
        expiresAt: seconds(record.challengeExpiresAt) + TTL_GRACE_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return record;
}

export async function readChallenge(nonce: string): Promise<ChallengeRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.mppChallenge(nonce), ConsistentRead: true }));
  return out.Item as ChallengeRecord | undefined;
}

export async function txHashUsed(hash: string): Promise<boolean> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.txHash(hash), ConsistentRead: true }));
  return !!out.Item;
}

const alreadyUsed = () => new PaymentRefusedError('ALREADY_USED', 'this payment or challenge has already been used');

/**
 * The proven payment is spent: in one transaction the open, unexpired challenge becomes `paid` by
 * this hash (with a serve lease for the caller) and the hash is recorded as used. Of any number of
 * parallel submissions, exactly one gets the lease; the others are refused ALREADY_USED.
 */
export async function consumeChallenge(challenge: ChallengeRecord, txHash: string, payer: string, now = Date.now()): Promise<string> {
  const { leaseId, leaseUntil } = newLease(now);
  try {
    await transactRetrying([
      tx.update(
        keys.mppChallenge(challenge.nonce),
        {
          expression: 'SET #status = :paid, txHash = :hash, payer = :payer, leaseUntil = :lease, leaseId = :leaseId, paidAt = :paidAt REMOVE expiresAt',
          names: { '#status': 'status' },
          values: {
            ':paid': 'paid',
            ':hash': txHash,
            ':payer': payer,
            ':lease': leaseUntil,
            ':leaseId': leaseId,
            ':paidAt': new Date(now).toISOString(),
          },
        },
        { expression: '#status = :open AND challengeExpiresAt > :now', values: { ':open': 'open', ':now': now } },
      ),
      tx.put(
        {
          ...keys.txHash(txHash),
          kind: 'mpp',
          nonce: challenge.nonce,
          plugin: challenge.plugin,
          chainId: challenge.chainId,
          payer,
          usedAt: new Date(now).toISOString(),
        },
        { expression: 'attribute_not_exists(pk)' },
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw alreadyUsed();
    throw err;
  }
  return leaseId;
}

/** A paid challenge whose earlier serve failed (or died): the same credential takes a fresh lease. */
export async function reclaimPaidChallenge(challenge: ChallengeRecord, txHash: string, now = Date.now()): Promise<string> {
  const leaseId = await takeServeLease(
    keys.mppChallenge(challenge.nonce),
    { expression: '#status = :paid AND txHash = :hash', names: { '#status': 'status' }, values: { ':paid': 'paid', ':hash': txHash } },
    now,
  );
  if (!leaseId) throw alreadyUsed();
  return leaseId;
}
