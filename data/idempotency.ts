import { createHash } from 'node:crypto';
import type { EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Idempotency-Key records in the caller's partition, one per operation, credential and key (hashed
 * together, so any header value makes a safe sort key). The credential is part of the record so a
 * stored answer is only ever replayed to the credential that earned it: another credential of the
 * account (an API key repeating a session's request) gets its own record and the operation's own
 * authorization. A claim writes an `in-progress` marker only where no live
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
/** Who presented the key: `session:<jti>` or `apiKey:<keyId>`. */
export type IdempotencyCredential = string;
const recordKey = (userId: string, operation: string, credential: IdempotencyCredential, key: string) =>
  keys.idempotencyRecord(userId, operation, sha256(`${credential}\u0000${key}`));
const epochSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** `request` is the request's fingerprint (its path parameters and body): another one under the same key is `reused`. */
export async function claimIdempotencyKey(
  userId: string,
  operation: string,
  credential: IdempotencyCredential,
  key: string,
  request: string,
  now = new Date(),
): Promise<Claim> {
  const store = tenant(userId);
  const itemKey = recordKey(userId, operation, credential, key);
  const nowSeconds = epochSeconds(now);
  const bodySha256 = sha256(request);
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
export async function completeIdempotencyKey(
  userId: string,
  operation: string,
  credential: IdempotencyCredential,
  key: string,
  answer: StoredAnswer,
): Promise<void> {
  await tenant(userId).update(recordKey(userId, operation, credential, key), {
    expression: 'SET #state = :done, answer = :answer',
    names: { '#state': 'state' },
    values: { ':done': 'done', ':answer': answer },
  });
}

/** A failed request keeps nothing: its marker goes, so a retry with the same key runs again. */
export async function releaseIdempotencyKey(userId: string, operation: string, credential: IdempotencyCredential, key: string): Promise<void> {
  await tenant(userId)
    .delete(recordKey(userId, operation, credential, key), {
      expression: '#state = :inProgress',
      names: { '#state': 'state' },
      values: { ':inProgress': 'in-progress' },
    })
    .catch((err) => {
      if (!(err instanceof ConditionFailedError)) throw err;
    });
}
