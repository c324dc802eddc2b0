import type { AuthContext } from '../../shared/auth/authenticate';
import { accountAccess } from '../../shared/billing/entitlements';
import { planLabel } from '../../shared/db/instances';
import { forbidden } from '../../shared/http/errors';

/** Spec 4.4: the path `userId` must be the caller; anyone else gets 403 and nothing more. */
export function requireOwner(auth: AuthContext, userId: string): string {
  if (userId !== auth.userId) throw forbidden('this instance belongs to another account', 'NOT_OWNER');
  return auth.userId;
}

/** The plan an instance reports: the stored account's (admins without a plan run at `network` level). */
export async function planOf(auth: AuthContext): Promise<string> {
  return planLabel(await accountAccess(auth));
}
