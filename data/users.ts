import { randomBytes, randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { isAccountPlan } from '#contract/plan-names';
import { db, tableName } from './client';
import * as keys from './keys';
import type { Key } from './keys';
import { ConditionFailedError, getGlobal, tenant, transact, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * The account record (spec 2.1) and its global look-ups. The profile lives at `USER#<id> / PROFILE`;
 * `EMAIL#<email>` makes emails unique and `REFCODE#<code>` resolves referral codes. Both are written
 * in the same transaction as the profile, so two sign-ups of one email give exactly one account.
 */
export interface UserProfile {
  userId: string;
  email: string;
  name: string;
  /** Set only from verified card webhooks (billing); null until a plan is bought. */
  plan: string | null;
  /** Balance; changed only through domain/billing/credits.ts together with a ledger entry. */
  credits: number;
  twoFactorEnabled: boolean;
  referralCode: string;
  referredBy?: string;
  passwordHash?: string;
  /** Sign-in wallet (SIWE), lower-case 0x address. */
  walletAddress?: string;
  notifications?: Record<string, boolean>;
  /**
   * The address was proven: an emailed link was opened, a reset link was used, or the OAuth
   * provider verified it. Admin and tester rights, OAuth linking and referral credit need it.
   */
  emailVerified?: boolean;
  /** A new address waiting for its emailed link; `email` changes only when the link is opened. */
  pendingEmail?: string;
  /** When the referral of this account was credited (at most once). */
  referralCreditedAt?: string;
  createdAt: string;
  updatedAt: string;
}

export class EmailTakenError extends DomainError {
  constructor(message: string) {
    super('conflict', message, 'USER_EXISTS');
  }
}

export const newUserId = () => `u_${randomUUID().replaceAll('-', '')}`;
/** The shape newUserId gives; OAuth and wallet sign-ins create accounts through it too. */
export const looksLikeUserId = (s: string) => /^u_[0-9a-f]{32}$/.test(s);

/** Referral codes: 10 base32-ish characters, case-insensitive (stored lower-case). */
export const newReferralCode = () => Array.from(randomBytes(10), (b) => 'abcdefghjkmnpqrstuvwxyz23456789'[b % 31]).join('');

/**
 * Domains of the emails the platform derives for accounts that sign in without one (a wallet, an
 * OAuth identity without a verified email, a social fid). Nobody may choose such an address at
 * sign-up or as a new email: wallet sign-in links to the account holding `<address>@wallet.local`,
 * so a password account registered under it would capture that wallet's sign-ins.
 */
const DERIVED_EMAIL_DOMAINS = ['wallet.local', 'oauth.local', 'social.local'] as const;
export const isDerivedEmail = (email: string) => DERIVED_EMAIL_DOMAINS.some((d) => email.trim().toLowerCase().endsWith(`@${d}`));

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export async function getUser(userId: string, consistent = false): Promise<UserProfile | undefined> {
  const item = await tenant(userId).get<UserProfile & Record<string, unknown>>(keys.profile(userId), consistent);
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, ...profile } = item;
  return profile as UserProfile;
}

export async function findUserIdByEmail(email: string): Promise<string | undefined> {
  return (await getGlobal<{ userId: string }>(keys.emailIndex(normaliseEmail(email)), true))?.userId;
}

export async function findUserIdByReferralCode(code: string): Promise<string | undefined> {
  return (await getGlobal<{ userId: string }>(keys.referralCode(code), true))?.userId;
}

export async function findUserIdByLogin(provider: 'wallet' | 'codehost' | 'webid', subject: string): Promise<string | undefined> {
  return (await getGlobal<{ userId: string }>(keys.loginIdentity(provider, subject), true))?.userId;
}

export type LoginProvider = 'wallet' | 'codehost' | 'webid';
export interface LoginIdentity {
  provider: LoginProvider;
  subject: string;
}

export interface NewUser {
  /** Chosen by the caller when other items of the transaction must name the account (a referral entry). */
  userId?: string;
  email: string;
  name?: string;
  passwordHash?: string;
  walletAddress?: string;
  referredBy?: string;
  /** Only for an address someone else proved (an OAuth provider's verified email). */
  emailVerified?: boolean;
  /** Sign-in identities to link in the same transaction (wallet address, OAuth subject). */
  logins?: LoginIdentity[];
  /**
   * A starting balance and its ledger entry (a referral bonus). It is part of the profile put, not a
   * credits update: one transaction may not touch the profile twice, and balance == ledger sum holds.
   */
  initialCredit?: { amount: number; reason: 'referral' | 'adjustment'; entryId: string; note?: string };
  /** Extra items written in the same transaction (e.g. the referrer's credit). */
  extraItems?: TransactItem[];
}

/** The `LOGIN#` look-up that resolves a sign-in identity to its account (linked-identity sign-in reads it). */
export const loginLookup = (login: LoginIdentity): Key => keys.loginIdentity(login.provider, login.subject);

/**
 * The `LOGIN#` look-up of a sign-in identity plus its marker in the owner's partition (which is how
 * account deletion finds it). Use these items whenever an identity is linked to an existing account.
 */
export function loginItems(userId: string, login: LoginIdentity): TransactItem[] {
  const absent = { expression: 'attribute_not_exists(pk)' };
  return [
    tx.put({ ...keys.loginIdentity(login.provider, login.subject), userId, provider: login.provider }, absent),
    tx.put({ ...keys.loginMarker(userId, login.provider, login.subject), provider: login.provider, subject: login.subject.toLowerCase() }),
  ];
}

/**
 * The global `LOGIN#...` item of an identity that signs in (an OAuth subject, a wallet, a social
 * fid), pointing at its account: what domain/auth/linked-identity.ts resolves an identity by.
 */
export type IdentityLookup = Key;

/** The account a sign-in look-up points at (consistent read). */
export async function userIdOfLookup(lookup: IdentityLookup): Promise<string | undefined> {
  return (await getGlobal<{ userId: string }>(lookup, true))?.userId;
}

/** Removes a look-up left behind by a deleted account, unless it was relinked to someone else meanwhile. */
export async function dropStaleLookup(lookup: IdentityLookup, staleUserId: string): Promise<void> {
  await transact([tx.delete(lookup, { expression: 'userId = :stale', values: { ':stale': staleUserId } })]).catch((err) => {
    if (!(err instanceof ConditionFailedError)) throw err;
  });
}

/**
 * The profile's side of linking an identity to an existing account, for the link's transaction:
 * the account must still exist; a sign-in wallet becomes the profile's unless it already has one.
 */
export function linkedProfileItem(userId: string, walletAddress: string | undefined, now = new Date()): TransactItem {
  const set = walletAddress ? 'SET updatedAt = :now, walletAddress = if_not_exists(walletAddress, :wallet)' : 'SET updatedAt = :now';
  return tx.update(
    keys.profile(userId),
    { expression: set, values: { ':now': now.toISOString(), ...(walletAddress ? { ':wallet': walletAddress.toLowerCase() } : {}) } },
    { expression: 'attribute_exists(pk)' },
  );
}

/** A decentralised-social identity (fid): its `LOGIN#social#` look-up, and the marker account deletion finds it by. */
export const socialLookup = (fid: string): IdentityLookup => keys.socialIdentity(fid);

export function socialLoginItems(userId: string, fid: string): TransactItem[] {
  return [
    tx.put({ ...keys.socialIdentity(fid), userId, provider: 'social' }, { expression: 'attribute_not_exists(pk)' }),
    // provider/subject and globalKeys let account deletion find and remove the look-up.
    tx.put({ ...keys.socialIdentityMarker(userId, fid), provider: 'social', subject: fid, globalKeys: [keys.socialIdentity(fid)] }),
  ];
}

/**
 * Creates the profile with its `EMAIL#`, `REFCODE#` and login items in one transaction.
 * Throws EmailTakenError when the email (or a login identity) already belongs to an account, and
 * ConditionFailedError when only one of `extraItems` failed its condition.
 */
export async function createUser(input: NewUser, now = new Date()): Promise<UserProfile> {
  const userId = input.userId ?? newUserId();
  const email = normaliseEmail(input.email);
  const at = now.toISOString();
  const profile: UserProfile = {
    userId,
    email,
    name: input.name?.trim() || email,
    plan: null,
    credits: input.initialCredit?.amount ?? 0,
    twoFactorEnabled: false,
    referralCode: newReferralCode(),
    referredBy: input.referredBy,
    passwordHash: input.passwordHash,
    walletAddress: input.walletAddress?.toLowerCase(),
    emailVerified: input.emailVerified ?? false,
    createdAt: at,
    updatedAt: at,
  };
  const absent = { expression: 'attribute_not_exists(pk)' };
  const credit = input.initialCredit;
  const items: TransactItem[] = [
    tx.put({ ...keys.profile(userId), ...profile }, absent),
    tx.put({ ...keys.emailIndex(email), userId }, absent),
    tx.put({ ...keys.referralCode(profile.referralCode), userId }, absent),
    ...(input.logins ?? []).flatMap((l) => loginItems(userId, l)),
    ...(credit
      ? [
          tx.put({
            ...keys.creditEntry(userId, credit.entryId),
            entryId: credit.entryId,
            delta: credit.amount,
            reason: credit.reason,
            note: credit.note,
            createdAt: at,
          }),
        ]
      : []),
  ];
  const ownItemCount = items.length;
  items.push(...(input.extraItems ?? []));
  try {
    await transactRetrying(items);
  } catch (err) {
    if (err instanceof ConditionFailedError) {
      if (err.reasons.slice(0, ownItemCount).some((r) => r === 'ConditionalCheckFailed')) {
        throw new EmailTakenError('an account with this email already exists');
      }
    }
    throw err;
  }
  return profile;
}

/** Every key an account owns outside its own partition, for account deletion. */
export function globalKeysOf(profile: UserProfile, logins: { provider: 'wallet' | 'codehost' | 'webid'; subject: string }[] = []): Key[] {
  return [keys.emailIndex(profile.email), keys.referralCode(profile.referralCode), ...logins.map((l) => keys.loginIdentity(l.provider, l.subject))];
}

/** The account as sign-in answers show it (contract PublicUser): no plan reads as `none`. */
export const accountView = (u: UserProfile) => {
  const plan = isAccountPlan(u.plan) ? u.plan : 'none';
  return { id: u.userId, email: u.email, name: u.name, plan, credits: u.credits };
};

/**
 * The items that move the account to a new, proven email in one transaction: the new `EMAIL#`
 * item must be free, the old one must still be ours and the profile must still hold the old email
 * (a concurrent change loses). The first item is the new address's, so a failure there means taken.
 */
export function changeEmailItems(userId: string, oldEmail: string, newEmail: string, now = new Date()): TransactItem[] {
  const to = normaliseEmail(newEmail);
  const from = normaliseEmail(oldEmail);
  const ours = { expression: 'userId = :me', values: { ':me': userId } };
  return [
    tx.put({ ...keys.emailIndex(to), userId }, { expression: 'attribute_not_exists(pk)' }),
    tx.delete(keys.emailIndex(from), ours),
    tx.update(
      keys.profile(userId),
      {
        expression: 'SET email = :to, emailVerified = :true, updatedAt = :now REMOVE pendingEmail',
        values: { ':to': to, ':true': true, ':now': now.toISOString() },
      },
      { expression: 'email = :from', values: { ':from': from } },
    ),
  ];
}

/**
 * Sets a new password hash and voids any outstanding reset link in the same transaction.
 * With `expectedHash` the change applies only if the password is still the one the caller proved
 * (a concurrent change or reset wins; this one throws ConditionFailedError).
 */
export async function setPasswordHash(userId: string, passwordHash: string, expectedHash?: string, now = new Date()): Promise<void> {
  const condition = expectedHash ? { expression: 'passwordHash = :expected', values: { ':expected': expectedHash } } : { expression: 'attribute_exists(pk)' };
  await transactRetrying([
    tx.update(
      keys.profile(userId),
      { expression: 'SET passwordHash = :hash, updatedAt = :now', values: { ':hash': passwordHash, ':now': now.toISOString() } },
      condition,
    ),
    tx.delete(keys.passwordReset(userId)),
  ]);
}

/** A settings change of the profile: the display name and any notification preferences. */
export interface ProfileChange {
  name?: string;
  notifications?: Record<string, boolean | undefined>;
}

/**
 * One conditional update of the name and of each named preference (nested SETs, so concurrent
 * changes of different preferences both land). Profiles made before preferences existed get the
 * empty map first. A missing profile (a deleted account) throws ConditionFailedError and is never
 * recreated. Returns the profile after the change.
 */
export async function updateProfileSettings(userId: string, change: ProfileChange): Promise<UserProfile> {
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

type StoredItem = Record<string, unknown> & Key;

/** Every item of the partition, whatever its sort key. */
const partitionItems = (userId: string): Promise<StoredItem[]> => tenant(userId).queryAll<StoredItem>('');

const isLoginProvider = (p: unknown): p is LoginProvider => p === 'wallet' || p === 'codehost' || p === 'webid';

const isKey = (k: unknown): k is Key => !!k && typeof (k as Key).pk === 'string' && typeof (k as Key).sk === 'string' && !(k as Key).pk.startsWith('USER#');

/**
 * The global look-ups an account's items point at: its email and referral code, each sign-in
 * identity (partition markers, and the profile's wallet), the outstanding reset token, its API
 * keys' `APIKEY#<hash>` and its custodial wallet's `WALLET#<address>`, and any key listed in an
 * item's `globalKeys` attribute: the convention for any other owned item with a global look-up.
 */
function globalKeysIn(userId: string, items: StoredItem[]): Key[] {
  const found: Key[] = [];
  for (const item of items) {
    if (item.sk === 'PROFILE') {
      const profile = item as unknown as UserProfile;
      found.push(...globalKeysOf(profile, profile.walletAddress ? [{ provider: 'wallet', subject: profile.walletAddress }] : []));
    } else if (item.sk.startsWith(keys.loginMarkerPrefix) && isLoginProvider(item.provider) && typeof item.subject === 'string') {
      found.push(keys.loginIdentity(item.provider, item.subject));
    } else if (item.sk === keys.passwordReset(userId).sk && typeof item.tokenHash === 'string') {
      found.push(keys.resetToken(item.tokenHash));
    } else if (item.sk.startsWith(keys.apiKeyPrefix) && typeof item.keyHash === 'string') {
      found.push(keys.apiKeyHash(item.keyHash));
    } else if (item.sk === keys.wallet(userId).sk && typeof item.address === 'string') {
      found.push(keys.walletAddress(item.address));
    }
    if (Array.isArray(item.globalKeys)) found.push(...item.globalKeys.filter(isKey));
  }
  const seen = new Set<string>();
  return found.filter((k) => {
    const id = `${k.pk}\u0000${k.sk}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Deletes a global look-up only if it still points at this user (it may have been freed and retaken). */
async function deleteGlobalIfOurs(key: Key, userId: string): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: key,
        ConditionExpression: 'attribute_not_exists(pk) OR attribute_not_exists(userId) OR userId = :me',
        ExpressionAttributeValues: { ':me': userId },
      }),
    );
  } catch (err) {
    if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
  }
}

const BATCH_SIZE = 25;

async function batchDelete(itemKeys: Key[]): Promise<void> {
  for (let i = 0; i < itemKeys.length; i += BATCH_SIZE) {
    let requests = itemKeys.slice(i, i + BATCH_SIZE).map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } }));
    for (let attempt = 0; requests.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
      if (attempt > 8) throw new Error('could not delete every item of the account');
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests } }));
      requests = (out.UnprocessedItems?.[tableName()] ?? []) as typeof requests;
    }
  }
}

/**
 * Removes an account: first its global look-ups (so the email, referral code and sign-in
 * identities are free and no key resolves to the account any more), then every item of its
 * partition except `retain` (the session revocation gate must outlive the account: it keeps the
 * account's unexpired tokens refused; `retainUntil` gives those items a TTL). Items written while
 * the deletion runs are swept by a second pass. Returns the deleted profile, or undefined when
 * there was no account.
 */
export async function deleteAccount(userId: string, opts: { retain?: Key[]; retainUntil?: number } = {}): Promise<UserProfile | undefined> {
  const retained = new Set((opts.retain ?? []).map((k) => k.sk));
  let items = await partitionItems(userId);
  const profileItem = items.find((i) => i.sk === 'PROFILE');
  if (!profileItem) return undefined;
  const { pk: _pk, sk: _sk, ...profile } = profileItem;
  for (let pass = 0; pass < 3; pass++) {
    for (const key of globalKeysIn(userId, items)) await deleteGlobalIfOurs(key, userId);
    const doomed = items.filter((i) => !retained.has(i.sk));
    if (!doomed.length) break;
    await batchDelete(doomed);
    items = await partitionItems(userId);
  }
  if (opts.retainUntil !== undefined) {
    for (const key of opts.retain ?? []) {
      await tenant(userId)
        .update(key, { expression: 'SET expiresAt = :until', values: { ':until': opts.retainUntil } }, { expression: 'attribute_exists(pk)' })
        .catch((err) => {
          if (!(err instanceof ConditionFailedError)) throw err;
        });
    }
  }
  return profile as unknown as UserProfile;
}
