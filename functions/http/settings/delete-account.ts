import { requestProvisioning } from '#adapters/provisioning-queue';
import { beginAccountDeletion, completeAccountDeletion } from '#domain/accounts/deletion';
import { revokeSessions } from '#domain/auth/session-gate';
import { endSessionCookies } from '#domain/auth/sign-in';
import { getSubscription } from '#domain/billing/entitlements';
import { deleteApiKey, listApiKeys } from '#data/api-keys';
import { getInstance } from '#data/instances';
import { forbidden, upstreamFailed } from '#platform/errors';
import { logger } from '#http/logger';
import { reply } from '#http/reply';
import { confirmOwner } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile } from './view';

/**
 * Deletes the account after proof of ownership (password, or a session signed in within 10
 * minutes). The account is marked `deleting`, then every session and API key is revoked. An
 * account with nothing outside the table is deleted at once (200); one with an instance or a card
 * subscription is finished by the deletion worker, which stops the instance and cancels the
 * subscription before deleting the data (202 `deleting`). The work is queued before anything is
 * revoked, so a queue outage (502) leaves the caller able to try again.
 */
export async function deleteAccount(ctx: SettingsCtx<'deleteAccount'>) {
  if (ctx.auth.via === 'apiKey') throw forbidden('only a signed-in session may delete the account', 'SESSION_REQUIRED');
  const user = await ownProfile(ctx.auth.userId);
  await confirmOwner(ctx.auth, user, ctx.body.password);
  const marker = await beginAccountDeletion(user.userId, { email: user.email, name: user.name });
  const [instance, subscription] = await Promise.all([getInstance(user.userId, true), getSubscription(user.userId)]);
  const needsWorker = !!instance || !!subscription?.subscriptionId;
  if (needsWorker) {
    try {
      await requestProvisioning({ kind: 'account-deletion', userId: user.userId });
    } catch (err) {
      logger().error('could not queue the account deletion', { error: (err as Error).message });
      throw upstreamFailed('the account could not be deleted right now; try again', 'BACKEND_UNAVAILABLE');
    }
  }
  await revokeSessions(user.userId);
  for (const key of await listApiKeys(user.userId)) await deleteApiKey(user.userId, key.id);
  if (needsWorker) return reply.json(202, { success: true, status: 'deleting' }, {}, endSessionCookies());
  await completeAccountDeletion(user.userId, marker);
  return reply.json(200, { success: true }, {}, endSessionCookies());
}
