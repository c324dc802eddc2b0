import { JWT_LIFETIME_SECONDS } from '../../shared/auth/jwt';
import { revokeSessions } from '../../shared/auth/session-gate';
import { endSessionCookies } from '../../shared/auth/sign-in';
import { keys } from '../../shared/db/keys';
import { deleteAccount as removeAccount } from '../../shared/db/users';
import { emitEvent, userEventData } from '../../shared/events/emit';
import { forbidden, notFound } from '../../shared/http/errors';
import { reply } from '../../shared/http/reply';
import { confirmOwner } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile } from './view';

/**
 * Deletes the account after proof of ownership (password, or a session signed in within 10
 * minutes). Every session is revoked first; the revocation record is the one item kept, with a TTL
 * past the longest token lifetime, so tokens of the deleted account can never write into its
 * partition again. API keys may not delete accounts.
 */
export async function deleteAccount(ctx: SettingsCtx<'deleteAccount'>) {
  if (ctx.auth.via === 'apiKey') throw forbidden('only a signed-in session may delete the account', 'SESSION_REQUIRED');
  const user = await ownProfile(ctx.auth.userId);
  await confirmOwner(ctx.auth, user, ctx.body.password);
  await revokeSessions(user.userId);
  const gate = keys.sessionGate(user.userId);
  const deleted = await removeAccount(user.userId, { retain: [gate], retainUntil: Math.floor(Date.now() / 1000) + JWT_LIFETIME_SECONDS + 3600 });
  if (!deleted) throw notFound('account not found');
  await emitEvent('user.deleted', userEventData(deleted, { deletedAt: new Date().toISOString() }));
  return reply.json(200, { success: true }, {}, endSessionCookies());
}
