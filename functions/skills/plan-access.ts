import { isAdminEmail } from '../../shared/auth/authenticate';
import { accessFrom, getSubscription } from '../../shared/billing/entitlements';
import { getUser } from '../../shared/db/users';

/** The account's plan entitlements as stored (admins get `network`), for skills that meter against the plan. */
export async function planAccess(userId: string) {
  const [user, subscription] = await Promise.all([getUser(userId), getSubscription(userId)]);
  return { access: accessFrom({ userId, isAdmin: !!user && isAdminEmail(user.email), isTester: false }, subscription), subscription };
}
