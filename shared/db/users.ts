import { randomBytes, randomUUID } from 'node:crypto';
import { keys, type Key } from './keys';
import { ConditionFailedError, getGlobal, tenant, transact, tx, type TransactItem } from './tenant';

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
  /** Balance; changed only through shared/billing/credits.ts together with a ledger entry. */
  credits: number;
  twoFactorEnabled: boolean;
  referralCode: string;
  referredBy?: string;
  passwordHash?: string;
  /** Sign-in wallet (SIWE), lower-case 0x address. */
  walletAddress?: string;
  notifications?: Record<string, boolean>;
  createdAt: string;
  updatedAt: string;
}

export class EmailTakenError extends Error {}

export const newUserId = () => `u_${randomUUID().replaceAll('-', '')}`;

/** Referral codes: 10 base32-ish characters, case-insensitive (stored lower-case). */
export const newReferralCode = () =>
  Array.from(randomBytes(10), (b) => 'abcdefghjkmnpqrstuvwxyz23456789'[b % 31]).join('');

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

export interface NewUser {
  email: string;
  name?: string;
  passwordHash?: string;
  walletAddress?: string;
  referredBy?: string;
  /** Sign-in identities to link in the same transaction (wallet address, OAuth subject). */
  logins?: { provider: 'wallet' | 'codehost' | 'webid'; subject: string }[];
  /** Extra items written in the same transaction (e.g. a referral credit entry). */
  extraItems?: TransactItem[];
}

/**
 * Creates the profile with its `EMAIL#`, `REFCODE#` and login items in one transaction.
 * Throws EmailTakenError when the email (or a login identity) already belongs to an account.
 */
export async function createUser(input: NewUser, now = new Date()): Promise<UserProfile> {
  const userId = newUserId();
  const email = normaliseEmail(input.email);
  const at = now.toISOString();
  const profile: UserProfile = {
    userId,
    email,
    name: input.name?.trim() || email,
    plan: null,
    credits: 0,
    twoFactorEnabled: false,
    referralCode: newReferralCode(),
    referredBy: input.referredBy,
    passwordHash: input.passwordHash,
    walletAddress: input.walletAddress?.toLowerCase(),
    createdAt: at,
    updatedAt: at,
  };
  const absent = { expression: 'attribute_not_exists(pk)' };
  const items: TransactItem[] = [
    tx.put({ ...keys.profile(userId), ...profile }, absent),
    tx.put({ ...keys.emailIndex(email), userId }, absent),
    tx.put({ ...keys.referralCode(profile.referralCode), userId }, absent),
    ...(input.logins ?? []).map((l) => tx.put({ ...keys.loginIdentity(l.provider, l.subject), userId, provider: l.provider }, absent)),
    ...(input.extraItems ?? []),
  ];
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new EmailTakenError('an account with this email already exists');
    throw err;
  }
  return profile;
}

/** Every key an account owns outside its own partition, for account deletion. */
export function globalKeysOf(profile: UserProfile, logins: { provider: 'wallet' | 'codehost' | 'webid'; subject: string }[] = []): Key[] {
  return [
    keys.emailIndex(profile.email),
    keys.referralCode(profile.referralCode),
    ...logins.map((l) => keys.loginIdentity(l.provider, l.subject)),
  ];
}

/** Public profile as the spec's settings answer shows it. */
export const publicProfile = (u: UserProfile) => ({
  id: u.userId,
  email: u.email,
  name: u.name,
  plan: u.plan,
  credits: u.credits,
  twoFactorEnabled: u.twoFactorEnabled,
});
