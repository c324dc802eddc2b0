import { settingsContract } from '#contract/settings';
import { createHandler } from '#http/pipeline';
import { getSettings, patchSettings, updateSettings } from './profile';

/**
 * A password change (hashing, credential eviction), a recovery's removal of standing setup and an
 * account deletion (the deletion queue, the instance, the mailer) are rare: each is loaded on its first call, so the settings page's
 * reads and profile updates start without them.
 */
const password = () => import('./password');
const deletion = () => import('./delete-account');
const standingSetup = () => import('./standing-setup');

export const handler = createHandler(settingsContract, {
  getSettings,
  updateSettings,
  patchSettings,
  changePassword: async (ctx) => (await password()).changePassword(ctx),
  deleteAccount: async (ctx) => (await deletion()).deleteAccount(ctx),
  removeStandingSetup: async (ctx) => (await standingSetup()).removeStandingSetup(ctx),
});
