import { createHash, randomBytes } from 'node:crypto';
import { sendEmail } from '#adapters/email';
import { DomainError } from '#platform/errors';
import { config } from '#platform/config';
import { findVerificationToken, spendVerificationToken, storeVerificationToken, type VerificationPurpose } from '#data/email-verifications';
import { getUser, normaliseEmail, type UserProfile } from '#data/users';

/**
 * Proof that someone reads an address: the password-reset pattern (32 random bytes emailed, only
 * the SHA-256 stored under a global look-up, single use, expiring), for the sign-up address and
 * for a new address an email change asks for, which takes effect only when its link is opened.
 */
export const VERIFY_TOKEN_TTL_SECONDS = 24 * 3600;

export type { VerificationPurpose };

export class VerificationTokenError extends DomainError {
  constructor(message: string) {
    super('invalid', message, 'INVALID_TOKEN');
  }
}
export class VerifiedEmailTakenError extends DomainError {
  /** Why, for the logs; the client is told only that the address is taken. */
  constructor(readonly reason: string) {
    super('conflict', 'this email is already in use', 'EMAIL_IN_USE');
  }
}

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

function verifyLink(token: string): string {
  const url = new URL('/verify-email', config().appUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

/**
 * Stores a new token for `email` (making any earlier link of the account void) and emails the link
 * to that address. `change` also records the address as the account's pending email.
 */
export async function sendVerificationLink(user: Pick<UserProfile, 'userId'>, email: string, purpose: VerificationPurpose, now = new Date()): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const tokenHash = sha256(token);
  const address = normaliseEmail(email);
  const expiresAt = Math.floor(now.getTime() / 1000) + VERIFY_TOKEN_TTL_SECONDS;
  await storeVerificationToken(tokenHash, { userId: user.userId, email: address, purpose, expiresAt }, now);
  const link = verifyLink(token);
  const why =
    purpose === 'signup' ? 'Someone signed up to the agent platform with this address.' : 'Someone asked to move an agent platform account to this address.';
  await sendEmail({
    to: address,
    subject: 'Confirm your email address',
    text:
      `${why}\n\nOpen this link within 24 hours to confirm that the address is yours:\n${link}\n\n` +
      'The link works once. If it was not you, ignore this email: nothing changes.\n',
  });
}

/**
 * Consumes a token and proves its address: for `signup` the account's email becomes verified, for
 * `change` the account moves to the new address (uniqueness settled in the same transaction).
 * Returns the account as it is now and what the token was for.
 */
export async function consumeVerificationToken(
  token: string,
  now = new Date(),
): Promise<{ user: UserProfile; purpose: VerificationPurpose; previousEmail: string }> {
  const tokenHash = sha256(token);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const stored = await findVerificationToken(tokenHash);
  if (!stored || typeof stored.expiresAt !== 'number' || stored.expiresAt <= nowSeconds)
    throw new VerificationTokenError('invalid or expired verification link');
  const user = await getUser(stored.userId, true);
  if (!user) throw new VerificationTokenError('invalid or expired verification link');

  const refusal = await spendVerificationToken(tokenHash, { userId: user.userId, email: stored.email, purpose: stored.purpose }, user.email, now);
  if (refusal === 'email-taken') throw new VerifiedEmailTakenError('the address now belongs to another account');
  if (refusal) throw new VerificationTokenError('invalid or expired verification link');
  const after = await getUser(user.userId, true);
  if (!after) throw new VerificationTokenError('invalid or expired verification link');
  return { user: after, purpose: stored.purpose, previousEmail: user.email };
}
