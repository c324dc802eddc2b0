import { isAdminEmail, isTesterEmail } from '../../shared/auth/authenticate';
import { revokeSessions } from '../../shared/auth/session-gate';
import { startSession } from '../../shared/auth/sign-in';
import { keys } from '../../shared/db/keys';
import { ConditionFailedError, tenant } from '../../shared/db/tenant';
import { changeEmail, EmailTakenError, isDerivedEmail, normaliseEmail, type UserProfile } from '../../shared/db/users';
import { emitEvent, userEventData } from '../../shared/events/emit';
import { conflict, forbidden, notFound } from '../../shared/http/errors';
import { reply } from '../../shared/http/reply';
import { confirmOwner } from './reauth';
import type { SettingsCtx } from './types';
import { ownProfile, settingsView } from './view';

export async function getSettings(ctx: SettingsCtx<'getSettings'>) {
  return settingsView(await ownProfile(ctx.auth.userId));
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
  await store.update(keys.profile(userId), { expression: 'SET notifications = if_not_exists(notifications, :empty)', values: { ':empty': {} } }, { expression: 'attribute_exists(pk)' });
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
 * Email change: refused for addresses in the admin or tester list (taking an admin's address
 * before they sign up would make anyone an admin), requires the current password, and moves the
 * `EMAIL#` look-up in one transaction. Session tokens carry the email, so every session is revoked
 * and the caller gets a new one.
 */
async function moveEmail(ctx: SettingsCtx<'updateSettings'>, user: UserProfile, newEmail: string): Promise<string[]> {
  if (isAdminEmail(newEmail) || isTesterEmail(newEmail) || isDerivedEmail(newEmail)) throw forbidden('this email address is reserved', 'EMAIL_RESERVED');
  await confirmOwner(ctx.auth, user, ctx.body.currentPassword, { passwordOnly: true });
  try {
    await changeEmail(user.userId, user.email, newEmail);
  } catch (err) {
    if (err instanceof EmailTakenError) throw conflict('this email is already in use', 'EMAIL_IN_USE');
    throw err;
  }
  await revokeSessions(user.userId);
  return ctx.auth.via === 'apiKey' ? [] : (await startSession({ userId: user.userId, email: newEmail })).cookies;
}

export async function updateSettings(ctx: SettingsCtx<'updateSettings'>) {
  const user = await ownProfile(ctx.auth.userId);
  const newEmail = ctx.body.email === undefined ? undefined : normaliseEmail(ctx.body.email);
  const changes: string[] = [];
  let cookies: string[] = [];
  if (newEmail !== undefined && newEmail !== user.email) {
    cookies = await moveEmail(ctx, user, newEmail);
    changes.push('email');
  }
  const change = { name: ctx.body.name };
  changes.push(...changedFields(user, change));
  const after = change.name !== undefined ? await updateProfile(user.userId, change) : await ownProfile(user.userId);
  if (changes.length) await emitEvent('user.updated', userEventData(after, { changes }));
  return reply.json(200, settingsView(after), {}, cookies);
}

export async function patchSettings(ctx: SettingsCtx<'patchSettings'>) {
  const user = await ownProfile(ctx.auth.userId);
  const change = { name: ctx.body.name, notifications: ctx.body.notifications };
  const changes = changedFields(user, change);
  const after = change.name !== undefined || change.notifications ? await updateProfile(user.userId, change) : user;
  if (changes.length) await emitEvent('user.updated', userEventData(after, { changes }));
  return settingsView(after);
}
