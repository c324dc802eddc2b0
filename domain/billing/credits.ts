import * as keys from '#data/keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from '#data/tenant';
import { transactRetrying } from '#data/transact-retry';

/**
 * The credits ledger. The balance on the profile and one ledger entry change in the same
 * transaction, so the balance always equals the sum of the ledger; a spend is conditional on the
 * balance covering it, so concurrent spends can never take it below zero. The entry id doubles as
 * an idempotency key: the same grant or spend applied twice is a no-op the second time.
 */

export type CreditReason = 'purchase' | 'referral' | 'usage' | 'refund' | 'adjustment';

export interface CreditEntry {
  entryId: string;
  delta: number;
  reason: CreditReason;
  balanceAfter?: number;
  note?: string;
  createdAt: string;
}

export class InsufficientCreditsError extends Error {}
export class DuplicateCreditEntryError extends Error {}

/** Sortable, unique entry ids: time first so the ledger reads in order. */
export const creditEntryId = (now = Date.now(), key: string = crypto.randomUUID()) => `${String(now).padStart(15, '0')}#${key}`;

/**
 * The transaction items of one ledger change, for callers that must write it together with
 * something else (sign-up with a referral credits the new user in the account's own transaction).
 */
export function creditItems(userId: string, delta: number, reason: CreditReason, entryId: string, note?: string, now = new Date()): TransactItem[] {
  if (!Number.isInteger(delta) || delta === 0) throw new Error('credit delta must be a non-zero integer');
  const balanceCondition = delta < 0 ? { expression: 'credits >= :need', values: { ':need': -delta } } : { expression: 'attribute_exists(pk)' };
  return [
    tx.update(
      keys.profile(userId),
      { expression: 'SET credits = credits + :delta, updatedAt = :now', values: { ':delta': delta, ':now': now.toISOString() } },
      balanceCondition,
    ),
    tx.put({ ...keys.creditEntry(userId, entryId), entryId, delta, reason, note, createdAt: now.toISOString() }, { expression: 'attribute_not_exists(pk)' }),
  ];
}

/**
 * Applies one change. Throws InsufficientCreditsError when a spend is not covered, and
 * DuplicateCreditEntryError when `entryId` was applied before (callers that retry treat it as done).
 */
export async function adjustCredits(userId: string, delta: number, reason: CreditReason, entryId = creditEntryId(), note?: string): Promise<void> {
  try {
    // Concurrent spends on one balance cancel each other's transactions (TransactionConflict): retried.
    await transactRetrying(creditItems(userId, delta, reason, entryId, note));
  } catch (err) {
    if (err instanceof ConditionFailedError) {
      if (err.reasons[1] === 'ConditionalCheckFailed') throw new DuplicateCreditEntryError(`credit entry ${entryId} already applied`);
      // A conflict that outlasted every retry is contention, not a short balance.
      if (err.reasons.length && err.reasons[0] !== 'ConditionalCheckFailed') throw err;
      throw new InsufficientCreditsError('not enough credits');
    }
    throw err;
  }
}

export async function creditLedger(userId: string, opts: { limit?: number; cursor?: string } = {}) {
  const page = await tenant(userId).query<CreditEntry & Record<string, unknown>>(keys.creditPrefix, { ...opts, newestFirst: true });
  return {
    entries: page.items.map(({ entryId, delta, reason, note, createdAt }) => ({ id: entryId, delta, reason, note, createdAt })),
    cursor: page.cursor,
  };
}
