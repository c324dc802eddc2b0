import { createHash } from 'node:crypto';
import type { EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Idempotency-Key records in the caller's partition, one per operation and key (the key hashed, so
 * any header value makes a safe sort key). A claim writes an `in-progress` marker only where no live
 * record is (conditional put), so of two concurrent requests with one key exactly one runs; the
 * winner then replaces the marker with its answer, kept until `expiresAt` (24 h, DynamoDB TTL; read
 * checks it too, since TTL deletes lazily). A marker whose holder died is taken over after `lockedUntil`.
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** Longer than any request may run (the API's Lambda timeout), so a live holder is never overtaken. */
export const IDEMPOTENCY_LOCK_SECONDS = 120;

export interface StoredAnswer {
  statusCode: number;
  body?: string;
  /** In place of `body` when the answer holds a secret (the route's `policy.secretAnswer`). */
  sealedBody?: EnvelopeRecord;
  contentType?: string;
}

interface IdempotencyItem extends Record<string, unknown> {
  state: 'in-progress' | 'done';
  bodySha256: string;
  expiresAt: number;
  lockedUntil: number;
  answer?: StoredAnswer;
}

export type Claim = { outcome: 'claimed' } | { outcome: 'replay'; answer: StoredAnswer } | { outcome: 'in-progress' } | { outcome: 'reused' };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const recordKey = (userId: string, operation: string, key: string) => keys.idempotencyRecord(userId, operation, sha256(key));
const epochSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

export async function claimIdempotencyKey(userId: string, operation: string, key: string, body: string, now = new Date()): Promise<Claim> {
  const store = tenant(userId);
  const itemKey = recordKey(userId, operation, key);
  const nowSeconds = epochSeconds(now);
  const bodySha256 = sha256(body);
  try {
    await store.put(
      { ...itemKey, state: 'in-progress', bodySha256, expiresAt: nowSeconds + IDEMPOTENCY_TTL_SECONDS, lockedUntil: nowSeconds + IDEMPOTENCY_LOCK_SECONDS },
      {
        expression: 'attribute_not_exists(pk) OR expiresAt < :now OR (#state = :inProgress AND lockedUntil < :now)',
        names: { '#state': 'state' },
        values: { ':now': nowSeconds, ':inProgress': 'in-progress' },
      },
    );
    return { outcome: 'claimed' };
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
  const existing = await store.get<IdempotencyItem>(itemKey, true);
  // Gone between the put and the read (a failed holder released it): the caller may simply retry.
  if (!existing) return { outcome: 'in-progress' };
  if (existing.bodySha256 !== bodySha256) return { outcome: 'reused' };
  if (existing.state === 'done' && existing.answer) return { outcome: 'replay', answer: existing.answer };
  return { outcome: 'in-progress' };
}

/** Keeps the answer of a claimed key; the expiry stays the claim's. */
export async function completeIdempotencyKey(userId: string, operation: string, key: string, answer: StoredAnswer): Promise<void> {
  await tenant(userId).update(recordKey(userId, operation, key), {
    expression: 'SET #state = :done, answer = :answer',
    names: { '#state': 'state' },
    values: { ':done': 'done', ':answer': answer },
  });
}

/** A failed request keeps nothing: its marker goes, so a retry with the same key runs again. */
export async function releaseIdempotencyKey(userId: string, operation: string, key: string): Promise<void> {
  await tenant(userId)
    .delete(recordKey(userId, operation, key), { expression: '#state = :inProgress', names: { '#state': 'state' }, values: { ':inProgress': 'in-progress' } })
    .catch((err) => {
      if (!(err instanceof ConditionFailedError)) throw err;
    });
}
