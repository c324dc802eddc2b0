import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, planLabel } from '#domain/billing/entitlements';
import { looksLikeUserId } from '#data/users';
import { forbidden } from '#platform/errors';

/** Spec 4.4: the path `userId` must be the caller; anyone else gets 403 and nothing more. */
export function requireOwner(auth: AuthContext, userId: string): string {
  if (userId === auth.userId) return auth.userId;
  // Same status either way; only the hint differs, and it tells nothing about other accounts.
  if (!looksLikeUserId(userId)) throw forbidden(`"${userId.slice(0, 64)}" is not a user id: use your own (the id in GET /api/settings)`, 'NOT_OWNER');
  throw forbidden('this instance belongs to another account', 'NOT_OWNER');
}

/** The plan an instance reports: the stored account's (admins without a plan run at `network` level). */
export async function planOf(auth: AuthContext): Promise<string> {
  return planLabel(await accountAccess(auth));
}
