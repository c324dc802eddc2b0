import * as keys from './keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * The credits ledger: the balance on the profile (`USER#<id> / PROFILE`, `credits`) and one entry
 * per change at `USER#<id> / CREDIT#<entryId>`, changed in the same transaction, so the balance
 * always equals the sum of the ledger. A spend is conditional on the balance covering it, so
 * concurrent spends can never take it below zero; an entry is written only if it does not exist, so
 * its id doubles as an idempotency key.
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

/** Sortable, unique entry ids: time first so the ledger reads in order. */
export const creditEntryId = (now = Date.now(), key: string = crypto.randomUUID()) => `${String(now).padStart(15, '0')}#${key}`;

/**
 * The transaction items of one ledger change (the balance's first, the entry's second), for callers
 * that must write it together with something else (sign-up with a referral credits the new user in
 * the account's own transaction).
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
 * What became of one ledger change: `applied`; `duplicate` when `entryId` was applied before;
 * `not-covered` when a spend exceeds the balance (or the account is gone).
 */
export type CreditChangeOutcome = 'applied' | 'duplicate' | 'not-covered';

/** Applies one ledger change on its own. A conflict that outlasted every retry still throws ConditionFailedError. */
export async function applyCreditChange(userId: string, delta: number, reason: CreditReason, entryId: string, note?: string): Promise<CreditChangeOutcome> {
  try {
    // Concurrent spends on one balance cancel each other's transactions (TransactionConflict): retried.
    await transactRetrying(creditItems(userId, delta, reason, entryId, note));
    return 'applied';
  } catch (err) {
    if (err instanceof ConditionFailedError) {
      if (err.reasons[1] === 'ConditionalCheckFailed') return 'duplicate';
      // A conflict that outlasted every retry is contention, not a short balance.
      if (err.reasons.length && err.reasons[0] !== 'ConditionalCheckFailed') throw err;
      return 'not-covered';
    }
    throw err;
  }
}

/** One page of the ledger, newest first, with the cursor of the next. */
export async function listCreditEntries(userId: string, opts: { limit?: number; cursor?: string } = {}): Promise<{ entries: CreditEntry[]; cursor?: string }> {
  const page = await tenant(userId).query<CreditEntry & Record<string, unknown>>(keys.creditPrefix, { ...opts, newestFirst: true });
  return { entries: page.items.map(({ pk: _pk, sk: _sk, ...entry }) => entry), cursor: page.cursor };
}

/**
 * The items that settle a spend reserved under `entryId` (a metered call) to what it finally
 * costs, for the transaction that records the usage: `refund` goes back to the balance (negative:
 * taken, on the condition the balance covers it) and the entry becomes the final charge, or goes
 * when nothing is charged. Nothing to write when the reservation was exact.
 */
export function settleReservedCreditItems(userId: string, entryId: string, refund: number, charged: number, note: string): TransactItem[] {
  if (refund === 0) return [];
  const entry = keys.creditEntry(userId, entryId);
  return [
    tx.update(
      keys.profile(userId),
      { expression: 'SET credits = credits + :d', values: { ':d': refund } },
      refund < 0 ? { expression: 'credits >= :need', values: { ':need': -refund } } : undefined,
    ),
    charged === 0 ? tx.delete(entry) : tx.update(entry, { expression: 'SET delta = :final, note = :note', values: { ':final': -charged, ':note': note } }),
  ];
}

/** Gives a reserved spend back in full: the balance regains it and its entry goes. */
export async function releaseReservedCredits(userId: string, entryId: string, credits: number): Promise<void> {
  await transactRetrying([
    tx.update(keys.profile(userId), { expression: 'SET credits = credits + :r', values: { ':r': credits } }),
    tx.delete(keys.creditEntry(userId, entryId)),
  ]);
}
