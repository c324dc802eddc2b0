import * as keys from './keys';
import { ConditionFailedError, getGlobal, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { changeEmailItems } from './users';

/**
 * Email verification links. Only the SHA-256 of an emailed token is stored: `EMAILVERIFY#<hash>`
 * resolves it to the account, and the account's `EMAILVERIFY` record names its current token, so a
 * new link voids every earlier one. The record lists the look-up in `globalKeys`, so account
 * deletion removes the look-up with the account.
 */
export type VerificationPurpose = 'signup' | 'change';

export interface StoredVerificationToken {
  userId: string;
  /** The address the link proves. */
  email: string;
  purpose: VerificationPurpose;
  /** Epoch seconds; the item's TTL too, but expiry is still checked on read. */
  expiresAt: number;
}

/**
 * Stores a new token as the account's current one, in one transaction with its global look-up. A
 * `change` token also records its address as the account's pending email, on condition that the
 * profile exists.
 */
export async function storeVerificationToken(tokenHash: string, token: StoredVerificationToken, now = new Date()): Promise<void> {
  const { userId, email, purpose, expiresAt } = token;
  const lookup = keys.emailVerifyToken(tokenHash);
  const items = [
    tx.put({ ...lookup, userId, email, purpose, expiresAt, createdAt: now.toISOString() }),
    tx.put({ ...keys.emailVerification(userId), tokenHash, email, purpose, expiresAt, globalKeys: [lookup], createdAt: now.toISOString() }),
  ];
  if (purpose === 'change') {
    items.push(
      tx.update(keys.profile(userId), { expression: 'SET pendingEmail = :email', values: { ':email': email } }, { expression: 'attribute_exists(pk)' }),
    );
  }
  await transactRetrying(items);
}

/** The token's look-up as stored (consistent read); expiry is the caller's to check. */
export async function findVerificationToken(tokenHash: string): Promise<StoredVerificationToken | undefined> {
  const item = await getGlobal<StoredVerificationToken & Record<string, unknown>>(keys.emailVerifyToken(tokenHash), true);
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, ...token } = item;
  return token;
}

/**
 * Why a token did not apply: it was used, expired or superseded meanwhile, or the profile no longer
 * holds the address it was sent for (`invalid-token`); or, for a `change`, the new address now
 * belongs to another account (`email-taken`).
 */
export type VerificationRefusal = 'invalid-token' | 'email-taken';

/**
 * Spends the token and proves its address in one transaction: the look-up must still exist and be
 * unexpired, and it must still be the account's current token. For `signup` the profile's email
 * becomes verified, on condition that it is still `token.email`; for `change` the account moves from
 * `currentEmail` to `token.email` (data/users.ts `changeEmailItems`: the new address must be free).
 * Contention that outlasts the retries still throws ConditionFailedError.
 */
export async function spendVerificationToken(
  tokenHash: string,
  token: Pick<StoredVerificationToken, 'userId' | 'email' | 'purpose'>,
  currentEmail: string,
  now = new Date(),
): Promise<VerificationRefusal | undefined> {
  const { userId } = token;
  const consume = [
    tx.delete(keys.emailVerifyToken(tokenHash), {
      expression: 'attribute_exists(pk) AND expiresAt > :now',
      values: { ':now': Math.floor(now.getTime() / 1000) },
    }),
    tx.delete(keys.emailVerification(userId), { expression: 'tokenHash = :hash', values: { ':hash': tokenHash } }),
  ];
  const prove =
    token.purpose === 'change'
      ? changeEmailItems(userId, currentEmail, token.email, now)
      : [
          tx.update(
            keys.profile(userId),
            { expression: 'SET emailVerified = :true, updatedAt = :at', values: { ':true': true, ':at': now.toISOString() } },
            { expression: 'email = :email', values: { ':email': token.email } },
          ),
        ];
  try {
    await transactRetrying([...consume, ...prove]);
    return undefined;
  } catch (err) {
    if (!(err instanceof ConditionFailedError) || !err.reasons.includes('ConditionalCheckFailed')) throw err;
    // The first item of `changeEmailItems` claims the new address: its failure means the address is taken.
    if (token.purpose === 'change' && err.reasons[consume.length] === 'ConditionalCheckFailed') return 'email-taken';
    return 'invalid-token';
  }
}
