import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { requireHuman } from '#adapters/bot-check';
import { sendEmail } from '#adapters/email';
import { hashPassword } from '#domain/auth/passwords';
import { evictCredentials } from '#domain/auth/evict';
import { creditReferralIfDue } from '#domain/billing/referrals';
import { config, signInTimingConfig } from '#platform/config';
import { findResetToken, resetPasswordWithToken, storeResetToken } from '#data/password-resets';
import { findUserIdByEmail, getUser } from '#data/users';
import { invalid, notFound } from '#platform/errors';
import { logger } from '#http/logger';
import { emailSubject, underRateLimit } from '#http/rate-limit';
import type { AccountsCtx } from './types';

export const RESET_TOKEN_TTL_SECONDS = 30 * 60;

const FORGOT_MESSAGE = 'If an account exists for this email, a password reset link has been sent to it.';
const RESET_MESSAGE = 'Your password has been reset. Sign in with the new password.';

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const invalidToken = () => invalid('invalid or expired reset token', 'INVALID_TOKEN');

function resetLink(token: string): string {
  const url = new URL('/reset-password', config().appUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

/**
 * Stores a new token for the account (only its hash, as the `RESET#` look-up, plus the account's
 * current-token record that makes any earlier link void) and emails the link.
 */
async function sendResetLink(userId: string, email: string): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const tokenHash = sha256(token);
  const now = new Date();
  const expiresAt = Math.floor(now.getTime() / 1000) + RESET_TOKEN_TTL_SECONDS;
  await storeResetToken(userId, email, tokenHash, expiresAt, now);
  const link = resetLink(token);
  await sendEmail({
    to: email,
    subject: 'Reset your password',
    text:
      `Someone asked to reset the password of the account for ${email}.\n\n` +
      `Open this link within 30 minutes to choose a new password:\n${link}\n\n` +
      'The link works once. If you did not ask for it, ignore this email: your password stays as it is.\n',
  });
}

/**
 * The answer is the same, and comes no sooner than FORGOT_PASSWORD_MIN_MS, whether or not the
 * account exists; a failure to store or send is logged, not answered, for the same reason.
 */
export async function forgotPassword(ctx: AccountsCtx<'forgotPassword'>) {
  await requireHuman(ctx.headers, ctx.ip);
  const started = Date.now();
  try {
    if (await underRateLimit('forgotPasswordAccount', emailSubject(ctx.body.email))) {
      const userId = await findUserIdByEmail(ctx.body.email);
      const user = userId ? await getUser(userId, true) : undefined;
      if (user) await sendResetLink(user.userId, user.email);
    }
  } catch (err) {
    logger().error('password reset email not sent', { error: (err as Error).message });
  }
  const wait = started + signInTimingConfig().forgotPasswordMinMs - Date.now();
  if (wait > 0) await sleep(wait);
  return { message: FORGOT_MESSAGE };
}

/**
 * Single use is settled by the database: the `RESET#` item is deleted under the condition that it
 * still exists and has not expired, together with the account's current-token record (so only the
 * latest link works) and the new hash. Then every session and API key of the account is revoked
 * and the gateway token rotated.
 */
export async function resetPassword(ctx: AccountsCtx<'resetPassword'>) {
  const tokenHash = sha256(ctx.body.token);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const stored = await findResetToken(tokenHash);
  if (!stored || typeof stored.expiresAt !== 'number' || stored.expiresAt <= nowSeconds) throw invalidToken();
  const user = await getUser(stored.userId, true);
  if (!user) throw notFound('account not found');

  const passwordHash = await hashPassword(ctx.body.password);
  // The link reached the address it was sent to: that proves the address, if it is still the account's.
  const provenEmail = stored.email && stored.email === user.email ? stored.email : undefined;
  const refused = await resetPasswordWithToken(user.userId, tokenHash, passwordHash, provenEmail);
  if (refused === 'account-changed') throw notFound('account not found');
  if (refused === 'invalid-token') throw invalidToken();
  // Whoever else got in (a guessed or stolen password) is out: sessions, API keys and the instance token.
  await evictCredentials(user.userId, { sessions: true, apiKeys: true, gatewayToken: true, reason: 'password reset', listStandingSetup: true });
  const after = await getUser(user.userId, true);
  if (after) await creditReferralIfDue(after);
  return { message: RESET_MESSAGE };
}
