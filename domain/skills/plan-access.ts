import { ownerRights } from '#domain/auth/runtime-agent';
import { accessFrom, getSubscription } from '#domain/billing/entitlements';

/**
 * The account's plan entitlements as stored (admins get `network`), for skills that meter against
 * the plan; admin only for a proven listed address, as everywhere (domain/auth/rights.ts).
 */
export async function planAccess(userId: string) {
  const [rights, subscription] = await Promise.all([ownerRights(userId), getSubscription(userId)]);
  return { access: accessFrom({ userId, isAdmin: !!rights?.isAdmin, isTester: false }, subscription), subscription };
}
