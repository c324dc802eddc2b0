import { creditedReferrals } from '#domain/billing/referrals';
import { NOTIFICATION_DEFAULTS } from '#contract/settings';
import { accountView, getUser, type UserProfile } from '#data/users';
import { notFound } from '#platform/errors';

/** The settings answer (contract SettingsProfile): stored preferences over the documented defaults, and the account's own referral standing. */
export const settingsView = async (u: UserProfile) => ({
  ...accountView(u),
  twoFactorEnabled: u.twoFactorEnabled ?? false,
  notifications: { ...NOTIFICATION_DEFAULTS, ...u.notifications },
  emailVerified: u.emailVerified === true,
  pendingEmail: u.pendingEmail ?? null,
  referralCode: u.referralCode,
  referralsCredited: await creditedReferrals(u.userId),
});

/** The caller's own profile (strongly consistent: settings are read right after they change). */
export async function ownProfile(userId: string): Promise<UserProfile> {
  const user = await getUser(userId, true);
  if (!user) throw notFound('account not found');
  return user;
}
