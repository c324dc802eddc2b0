import { isListedAddress } from '#domain/auth/rights';
import { sendVerificationLink } from '#domain/auth/email-verification';
import { findUserIdByEmail, isDerivedEmail, normaliseEmail, type ProfileChange, updateProfileSettings, type UserProfile } from '#data/users';
import { ConditionFailedError } from '#data/failures';
import { emitEvent, userEventData } from '#adapters/events-queue';
import { conflict, forbidden, notFound } from '#platform/errors';
import { confirmOwner } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile, settingsView } from './view';

export async function getSettings(ctx: SettingsCtx<'getSettings'>) {
  return await settingsView(await ownProfile(ctx.auth.userId));
}

function changedFields(before: UserProfile, change: ProfileChange): string[] {
  const out: string[] = [];
  if (change.name !== undefined && change.name !== before.name) out.push('name');
  const prefs = Object.entries(change.notifications ?? {}).filter(([k, v]) => v !== undefined && before.notifications?.[k] !== v);
  if (prefs.length) out.push('notifications');
  return out;
}

/** Missing profile on an update is a deleted account: 404, and never a recreated item. */
async function updateProfile(userId: string, change: ProfileChange): Promise<UserProfile> {
  try {
    return await updateProfileSettings(userId, change);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw notFound('account not found');
    throw err;
  }
}

/**
 * Email change: refused for addresses in the admin or tester list and derived ones, requires the
 * current password, and takes effect only when the link emailed to the NEW address is opened
 * (POST /api/auth/verify-email), which moves the `EMAIL#` look-up and signs out every session.
 * Until then the address is the account's `pendingEmail`.
 */
async function requestEmailChange(ctx: SettingsCtx<'updateSettings'>, user: UserProfile, newEmail: string): Promise<void> {
  if (isListedAddress(newEmail) || isDerivedEmail(newEmail)) throw forbidden('this email address is reserved', 'EMAIL_RESERVED');
  await confirmOwner(ctx.auth, user, ctx.body.currentPassword, { passwordOnly: true });
  if (await findUserIdByEmail(newEmail)) throw conflict('this email is already in use', 'EMAIL_IN_USE');
  await sendVerificationLink(user, newEmail, 'change');
}

export async function updateSettings(ctx: SettingsCtx<'updateSettings'>) {
  const user = await ownProfile(ctx.auth.userId);
  const newEmail = ctx.body.email === undefined ? undefined : normaliseEmail(ctx.body.email);
  if (newEmail !== undefined && newEmail !== user.email) await requestEmailChange(ctx, user, newEmail);
  const change = { name: ctx.body.name };
  const changes = changedFields(user, change);
  const after = change.name !== undefined ? await updateProfile(user.userId, change) : await ownProfile(user.userId);
  if (changes.length) await emitEvent('user.updated', userEventData(after, { changes }));
  return settingsView(after);
}

export async function patchSettings(ctx: SettingsCtx<'patchSettings'>) {
  const user = await ownProfile(ctx.auth.userId);
  const change = { name: ctx.body.name, notifications: ctx.body.notifications };
  const changes = changedFields(user, change);
  const after = change.name !== undefined || change.notifications ? await updateProfile(user.userId, change) : user;
  if (changes.length) await emitEvent('user.updated', userEventData(after, { changes }));
  return settingsView(after);
}
