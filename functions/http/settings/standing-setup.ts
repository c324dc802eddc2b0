import { removeStandingSetup as removeAll } from '#domain/auth/standing-setup';
import { forbidden } from '#platform/errors';
import type { SettingsCtx } from './types';

/** Session only: what it defends against is a credential the owner did not make, a leaked API key among them. */
export async function removeStandingSetup(ctx: SettingsCtx<'removeStandingSetup'>) {
  if (ctx.auth.via === 'apiKey') throw forbidden('only a signed-in session may remove what is set up on the account', 'SESSION_REQUIRED');
  return { success: true as const, removed: await removeAll(ctx.auth.userId) };
}
