import { referralConfig } from '#platform/config';
import * as keys from '#data/keys';
import { ConditionFailedError, tenant, tx } from '#data/tenant';
import { transactRetrying } from '#data/transact-retry';
import type { UserProfile } from '#data/users';
import { creditEntryId, creditItems } from './credits';

export type ReferralOutcome = 'credited' | 'not-due' | 'cap-reached';

/**
 * Pays a referral once the referred account has proven its address: REFERRAL_CREDITS to both
 * accounts, in one transaction that also marks the referred profile as credited (so it pays once)
 * and counts the referral under the referrer's cap (so throwaway sign-ups cannot farm credit).
 */
export async function creditReferralIfDue(user: UserProfile, now = new Date()): Promise<ReferralOutcome> {
  const amount = referralConfig().credits;
  const referrerId = user.referredBy;
  if (!referrerId || !user.emailVerified || user.referralCreditedAt || amount === 0) return 'not-due';
  const at = now.getTime();
  const items = [
    tx.update(
      keys.profile(user.userId),
      { expression: 'SET credits = credits + :amount, referralCreditedAt = :now, updatedAt = :now', values: { ':amount': amount, ':now': now.toISOString() } },
      {
        expression: 'attribute_not_exists(referralCreditedAt) AND emailVerified = :true AND referredBy = :referrer',
        values: { ':true': true, ':referrer': referrerId },
      },
    ),
    tx.put({
      ...keys.creditEntry(user.userId, creditEntryId(at, 'referral-bonus')),
      entryId: creditEntryId(at, 'referral-bonus'),
      delta: amount,
      reason: 'referral',
      note: 'signed up with a referral code and confirmed the address',
      createdAt: now.toISOString(),
    }),
    tx.update(
      keys.referralCount(referrerId),
      { expression: 'SET #count = if_not_exists(#count, :zero) + :one', names: { '#count': 'count' }, values: { ':zero': 0, ':one': 1 } },
      { expression: 'attribute_not_exists(#count) OR #count < :cap', values: { ':cap': referralConfig().cap } },
    ),
    ...creditItems(referrerId, amount, 'referral', creditEntryId(at, `referral-${user.userId}`), `referred ${user.userId}`, now),
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

/** How many referrals of the account were credited. */
export async function creditedReferrals(userId: string): Promise<number> {
  const item = await tenant(userId).get<{ count?: number }>(keys.referralCount(userId));
  return item?.count ?? 0;
}
