import { NOTIFICATION_DEFAULTS } from '../../shared/contract/settings';
import { accountView, getUser, type UserProfile } from '../../shared/db/users';
import { notFound } from '../../shared/http/errors';

/** The settings answer (contract SettingsProfile): stored preferences over the documented defaults. */
export const settingsView = (u: UserProfile) => ({
  ...accountView(u),
  twoFactorEnabled: u.twoFactorEnabled ?? false,
  notifications: { ...NOTIFICATION_DEFAULTS, ...u.notifications },
});

/** The caller's own profile (strongly consistent: settings are read right after they change). */
export async function ownProfile(userId: string): Promise<UserProfile> {
  const user = await getUser(userId, true);
  if (!user) throw notFound('account not found');
  return user;
}
