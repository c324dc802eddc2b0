import { checkPassword, hashPassword } from '#domain/auth/passwords';
import { evictCredentials } from '#domain/auth/evict';
import { ConditionFailedError } from '#data/failures';
import { setPasswordHash } from '#data/users';
import { wrongPassword } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile } from './view';

/**
 * Checks the current password, stores the new hash only if the password is still the one checked
 * (a concurrent change or reset wins), voids any emailed reset link, and revokes every other
 * session: the caller's own keeps working.
 */
export async function changePassword(ctx: SettingsCtx<'changePassword'>) {
  const user = await ownProfile(ctx.auth.userId);
  if (!(await checkPassword(user.passwordHash, ctx.body.currentPassword))) throw wrongPassword();
  try {
    await setPasswordHash(user.userId, await hashPassword(ctx.body.newPassword), user.passwordHash);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw wrongPassword();
    throw err;
  }
  await evictCredentials(user.userId, {
    sessions: true,
    keepSessionId: ctx.auth.sessionId,
    apiKeys: ctx.body.revokeApiKeys === true,
    gatewayToken: true,
    reason: 'password change',
  });
  return { success: true as const };
}
