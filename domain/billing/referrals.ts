import { referralConfig } from '#platform/config';
import { paidReferralCount, payReferral, type ReferralPayment } from '#data/referrals';
import type { UserProfile } from '#data/users';

export type ReferralOutcome = ReferralPayment;

/**
 * Pays a referral once the referred account has proven its address: REFERRAL_CREDITS to both
 * accounts, in one transaction that also marks the referred profile as credited (so it pays once)
 * and counts the referral under the referrer's cap (so throwaway sign-ups cannot farm credit).
 */
export async function creditReferralIfDue(user: UserProfile, now = new Date()): Promise<ReferralOutcome> {
  const amount = referralConfig().credits;
  const referrerId = user.referredBy;
  if (!referrerId || !user.emailVerified || user.referralCreditedAt || amount === 0) return 'not-due';
  return payReferral({ userId: user.userId, referrerId, amount, cap: referralConfig().cap }, now);
}

/** How many referrals of the account were credited. */
export async function creditedReferrals(userId: string): Promise<number> {
  return paidReferralCount(userId);
}
