import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { serveUnderLease, takeServeLease } from './serve-lease';
import { tx } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * MPP 402 challenges once issued (data/single-use.ts, purpose `mppChallenge`), and the transaction
 * hashes that paid for one: reads, the payment that spends a challenge, and its serve lease
 * (data/serve-lease.ts). The rules of redemption are domain/payments/challenges.ts's.
 */

export async function readMppChallenge<T>(nonce: string): Promise<T | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.mppChallenge(nonce), ConsistentRead: true }));
  return out.Item as T | undefined;
}

export async function txHashUsed(hash: string): Promise<boolean> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.txHash(hash), ConsistentRead: true }));
  return !!out.Item;
}

export interface MppPayment {
  txHash: string;
  payer: string;
  /** Recorded on the hash, for support questions. */
  plugin: string;
  chainId: number;
  leaseId: string;
  leaseUntil: number;
}

/**
 * In one transaction: the open, unexpired challenge becomes `paid` by this hash (with the payer's
 * serve lease) and the hash is recorded as used for good. Throws ConditionFailedError when the
 * challenge is no longer open or the hash already paid for something.
 */
export async function payMppChallenge(nonce: string, payment: MppPayment, now: number): Promise<void> {
  await transactRetrying([
    tx.update(
      keys.mppChallenge(nonce),
      {
        expression: 'SET #status = :paid, txHash = :hash, payer = :payer, leaseUntil = :lease, leaseId = :leaseId, paidAt = :paidAt REMOVE expiresAt',
        names: { '#status': 'status' },
        values: {
          ':paid': 'paid',
          ':hash': payment.txHash,
          ':payer': payment.payer,
          ':lease': payment.leaseUntil,
          ':leaseId': payment.leaseId,
          ':paidAt': new Date(now).toISOString(),
        },
      },
      { expression: '#status = :open AND challengeExpiresAt > :now', values: { ':open': 'open', ':now': now } },
    ),
    tx.put(
      {
        ...keys.txHash(payment.txHash),
        kind: 'mpp',
        nonce,
        plugin: payment.plugin,
        chainId: payment.chainId,
        payer: payment.payer,
        usedAt: new Date(now).toISOString(),
      },
      { expression: 'attribute_not_exists(pk)' },
    ),
  ]);
}

/** A fresh serve lease on a challenge paid by `txHash`; undefined when it was served or another serve holds it. */
export function takePaidMppChallengeLease(nonce: string, txHash: string, now = Date.now()): Promise<string | undefined> {
  return takeServeLease(
    keys.mppChallenge(nonce),
    { expression: '#status = :paid AND txHash = :hash', names: { '#status': 'status' }, values: { ':paid': 'paid', ':hash': txHash } },
    now,
  );
}

/** Runs `serve` under the challenge's lease (data/serve-lease.ts). */
export const serveMppChallenge = <T>(nonce: string, leaseId: string, serve: () => Promise<T>): Promise<T> =>
  serveUnderLease(keys.mppChallenge(nonce), leaseId, 'MPP challenge', serve);
