import { creditEntryId, creditItems } from './credits';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Referral payments: both accounts' credits, the referred profile's `referralCreditedAt` (so a
 * referral pays once) and the referrer's count of paid referrals at `USER#<id> / REFERRALCOUNT`
 * (held under a cap, so throwaway sign-ups cannot farm credit), all in one transaction.
 */

/** `not-due`: the referred profile no longer qualifies (already credited, unverified, another referrer). */
export type ReferralPayment = 'credited' | 'not-due' | 'cap-reached';

/**
 * Credits `amount` to the referred account and to its referrer, on the conditions that the referred
 * profile is verified, names `referrerId` and was not credited before, and that the referrer has
 * fewer than `cap` paid referrals.
 */
export async function payReferral(input: { userId: string; referrerId: string; amount: number; cap: number }, now = new Date()): Promise<ReferralPayment> {
  const { userId, referrerId, amount, cap } = input;
  const at = now.getTime();
  const items = [
    tx.update(
      keys.profile(userId),
      { expression: 'SET credits = credits + :amount, referralCreditedAt = :now, updatedAt = :now', values: { ':amount': amount, ':now': now.toISOString() } },
      {
        expression: 'attribute_not_exists(referralCreditedAt) AND emailVerified = :true AND referredBy = :referrer',
        values: { ':true': true, ':referrer': referrerId },
      },
    ),
    tx.put({
      ...keys.creditEntry(userId, creditEntryId(at, 'referral-bonus')),
      entryId: creditEntryId(at, 'referral-bonus'),
      delta: amount,
      reason: 'referral',
      note: 'signed up with a referral code and confirmed the address',
      createdAt: now.toISOString(),
    }),
    tx.update(
      keys.referralCount(referrerId),
      { expression: 'SET #count = if_not_exists(#count, :zero) + :one', names: { '#count': 'count' }, values: { ':zero': 0, ':one': 1 } },
      { expression: 'attribute_not_exists(#count) OR #count < :cap', values: { ':cap': cap } },
    ),
    ...creditItems(referrerId, amount, 'referral', creditEntryId(at, `referral-${userId}`), `referred ${userId}`, now),
  ];
  try {
    await transactRetrying(items);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    if (err.reasons[2] === 'ConditionalCheckFailed') return 'cap-reached';
    if (err.reasons.includes('ConditionalCheckFailed')) return 'not-due';
    throw err;
  }
  return 'credited';
}

/** How many referrals of the account were paid. */
export async function paidReferralCount(userId: string): Promise<number> {
  const item = await tenant(userId).get<{ count?: number }>(keys.referralCount(userId));
  return item?.count ?? 0;
}
