import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { adjustCredits, creditEntryId, DuplicateCreditEntryError, InsufficientCreditsError, type CreditEntry } from '#domain/billing/credits';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser, getUser } from '#data/users';

const newAccount = async () => (await createUser({ email: `${randomUUID()}@example.com` })).userId;

async function ledgerSum(userId: string) {
  const entries = await tenant(userId).queryAll<CreditEntry & Record<string, unknown>>(keys.creditPrefix);
  return { count: entries.length, sum: entries.reduce((s, e) => s + e.delta, 0) };
}

describe('credits ledger', () => {
  it('50 parallel spends of 1 on a balance of 10: exactly 10 succeed, the balance ends at 0 and equals the ledger sum', async () => {
    const userId = await newAccount();
    await adjustCredits(userId, 10, 'purchase');
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => adjustCredits(userId, -1, 'usage')));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.reason).toBeInstanceOf(InsufficientCreditsError);
    const balance = (await getUser(userId, true))!.credits;
    expect(balance).toBe(0);
    expect(await ledgerSum(userId)).toEqual({ count: 11, sum: balance });
  });

  it('a spend larger than the balance is refused and changes nothing', async () => {
    const userId = await newAccount();
    await adjustCredits(userId, 5, 'referral');
    await expect(adjustCredits(userId, -6, 'usage')).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect((await getUser(userId, true))!.credits).toBe(5);
    expect(await ledgerSum(userId)).toEqual({ count: 1, sum: 5 });
  });

  it('the same entry id applied twice is refused the second time (idempotent grants)', async () => {
    const userId = await newAccount();
    const entryId = creditEntryId(Date.now(), 'purchase#cs_test_same');
    await adjustCredits(userId, 300, 'purchase', entryId);
    await expect(adjustCredits(userId, 300, 'purchase', entryId)).rejects.toBeInstanceOf(DuplicateCreditEntryError);
    expect((await getUser(userId, true))!.credits).toBe(300);
  });

  it('refuses zero and fractional changes', async () => {
    const userId = await newAccount();
    await expect(adjustCredits(userId, 0, 'adjustment')).rejects.toThrow();
    await expect(adjustCredits(userId, 1.5, 'adjustment')).rejects.toThrow();
    expect(await ledgerSum(userId)).toEqual({ count: 0, sum: 0 });
  });
});
