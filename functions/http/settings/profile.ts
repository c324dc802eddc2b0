import { isAdminEmail, isTesterEmail } from '#domain/auth/authenticate';
import { sendVerificationLink } from '#domain/auth/email-verification';
import * as keys from '#data/keys';
import { ConditionFailedError, tenant } from '#data/tenant';
import { findUserIdByEmail, isDerivedEmail, normaliseEmail, type UserProfile } from '#data/users';
import { emitEvent, userEventData } from '#adapters/events-queue';
import { conflict, forbidden, notFound } from '#http/errors';
import { confirmOwner } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile, settingsView } from './view';

export async function getSettings(ctx: SettingsCtx<'getSettings'>) {
  return await settingsView(await ownProfile(ctx.auth.userId));
}

type ProfileChange = { name?: string; notifications?: Record<string, boolean | undefined> };

/**
 * One conditional update of the name and of each named preference (nested SETs, so concurrent
 * PATCHes of different preferences both land). Profiles made before preferences existed get the
 * empty map first.
 */
async function applyChange(userId: string, change: ProfileChange): Promise<UserProfile> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': new Date().toISOString() };
  const sets = ['updatedAt = :now'];
  if (change.name !== undefined) {
    names['#name'] = 'name';
    values[':name'] = change.name;
    sets.push('#name = :name');
  }
  const prefs = Object.entries(change.notifications ?? {}).filter(([, v]) => v !== undefined);
  prefs.forEach(([key, value], i) => {
    names[`#n${i}`] = key;
    values[`:n${i}`] = value;
    sets.push(`notifications.#n${i} = :n${i}`);
  });
  const store = tenant(userId);
  const update = { expression: `SET ${sets.join(', ')}`, names: Object.keys(names).length ? names : undefined, values };
  const guard = prefs.length ? 'attribute_exists(pk) AND attribute_type(notifications, :map)' : 'attribute_exists(pk)';
  const condition = { expression: guard, values: prefs.length ? { ':map': 'M' } : undefined };
  try {
    return await store.update<UserProfile & Record<string, unknown>>(keys.profile(userId), update, condition);
  } catch (err) {
    if (!(err instanceof ConditionFailedError) || !prefs.length) throw err;
  }
  await store.update(
    keys.profile(userId),
    { expression: 'SET notifications = if_not_exists(notifications, :empty)', values: { ':empty': {} } },
    { expression: 'attribute_exists(pk)' },
  );
  return store.update<UserProfile & Record<string, unknown>>(keys.profile(userId), update, condition);
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
    return await applyChange(userId, change);
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
  if (isAdminEmail(newEmail) || isTesterEmail(newEmail) || isDerivedEmail(newEmail)) throw forbidden('this email address is reserved', 'EMAIL_RESERVED');
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
