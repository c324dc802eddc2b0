import * as keys from './keys';
import { ConditionFailedError, getGlobal, tx } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Password reset links. Only the SHA-256 of an emailed token is stored: `RESET#<hash>` resolves it
 * to the account, and the account's `PASSWORDRESET` record names its current token, so a new link
 * voids every earlier one. Account deletion frees the look-up through that record (data/users.ts).
 */
export interface StoredResetToken extends Record<string, unknown> {
  userId: string;
  /** The address the link was sent to. */
  email?: string;
  /** Epoch seconds; the item's TTL too, but expiry is still checked on read. */
  expiresAt: number;
}

/** Stores a new token as the account's current one, in one transaction with its global look-up. */
export async function storeResetToken(userId: string, email: string, tokenHash: string, expiresAt: number, now = new Date()): Promise<void> {
  const createdAt = now.toISOString();
  await transactRetrying([
    tx.put({ ...keys.resetToken(tokenHash), userId, email, expiresAt, createdAt }),
    tx.put({ ...keys.passwordReset(userId), tokenHash, expiresAt, createdAt }),
  ]);
}

export const findResetToken = (tokenHash: string) => getGlobal<StoredResetToken>(keys.resetToken(tokenHash), true);

/**
 * Why a reset did not apply: the token was used, expired or superseded meanwhile (`invalid-token`),
 * or the profile is gone or no longer holds the address being proven (`account-changed`).
 */
export type ResetRefusal = 'invalid-token' | 'account-changed';

/**
 * Spends the token and sets the new password hash in one transaction: the `RESET#` item must still
 * exist and be unexpired, it must still be the account's current token, and the profile must exist.
 * With `provenEmail` (the link reached the account's current address) the address becomes verified,
 * on condition that the profile still holds it. Contention that outlasts the retries still throws
 * ConditionFailedError (the pipeline answers 409, try again).
 */
export async function resetPasswordWithToken(
  userId: string,
  tokenHash: string,
  passwordHash: string,
  provenEmail: string | undefined,
  now = new Date(),
): Promise<ResetRefusal | undefined> {
  const at = now.toISOString();
  const profileUpdate = provenEmail
    ? tx.update(
        keys.profile(userId),
        { expression: 'SET passwordHash = :pw, emailVerified = :true, updatedAt = :at', values: { ':pw': passwordHash, ':true': true, ':at': at } },
        { expression: 'email = :email', values: { ':email': provenEmail } },
      )
    : tx.update(
        keys.profile(userId),
        { expression: 'SET passwordHash = :pw, updatedAt = :at', values: { ':pw': passwordHash, ':at': at } },
        { expression: 'attribute_exists(pk)' },
      );
  try {
    await transactRetrying([
      tx.delete(keys.resetToken(tokenHash), { expression: 'attribute_exists(pk) AND expiresAt > :now', values: { ':now': Math.floor(now.getTime() / 1000) } }),
      tx.delete(keys.passwordReset(userId), { expression: 'tokenHash = :hash', values: { ':hash': tokenHash } }),
      profileUpdate,
    ]);
    return undefined;
  } catch (err) {
    if (!(err instanceof ConditionFailedError) || !err.reasons.includes('ConditionalCheckFailed')) throw err;
    const [token, current] = err.reasons;
    return token !== 'ConditionalCheckFailed' && current !== 'ConditionalCheckFailed' ? 'account-changed' : 'invalid-token';
  }
}
