import { isAdminEmail } from '#domain/auth/authenticate';
import { accessFrom, getSubscription } from '#domain/billing/entitlements';
import { getUser } from '#data/users';

/** The account's plan entitlements as stored (admins get `network`), for skills that meter against the plan. */
export async function planAccess(userId: string) {
  const [user, subscription] = await Promise.all([getUser(userId), getSubscription(userId)]);
  return { access: accessFrom({ userId, isAdmin: !!user && isAdminEmail(user.email), isTester: false }, subscription), subscription };
}
