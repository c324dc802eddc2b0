import { applyCreditChange, creditEntryId, type CreditReason, listCreditEntries } from '#data/credits';

export { creditEntryId, creditItems, type CreditEntry, type CreditReason } from '#data/credits';

/**
 * The credits ledger (data/credits.ts): the balance on the profile and one ledger entry change in
 * the same transaction, so the balance always equals the sum of the ledger; a spend is conditional
 * on the balance covering it, so concurrent spends can never take it below zero. The entry id
 * doubles as an idempotency key: the same grant or spend applied twice is a no-op the second time.
 */

export class InsufficientCreditsError extends Error {}
export class DuplicateCreditEntryError extends Error {}

/**
 * Applies one change. Throws InsufficientCreditsError when a spend is not covered, and
 * DuplicateCreditEntryError when `entryId` was applied before (callers that retry treat it as done).
 */
export async function adjustCredits(userId: string, delta: number, reason: CreditReason, entryId = creditEntryId(), note?: string): Promise<void> {
  const outcome = await applyCreditChange(userId, delta, reason, entryId, note);
  if (outcome === 'duplicate') throw new DuplicateCreditEntryError(`credit entry ${entryId} already applied`);
  if (outcome === 'not-covered') throw new InsufficientCreditsError('not enough credits');
}

export async function creditLedger(userId: string, opts: { limit?: number; cursor?: string } = {}) {
  const page = await listCreditEntries(userId, opts);
  return {
    entries: page.entries.map(({ entryId, delta, reason, note, createdAt }) => ({ id: entryId, delta, reason, note, createdAt })),
    cursor: page.cursor,
  };
}
