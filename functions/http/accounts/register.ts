import { requireHuman } from '#adapters/bot-check';
import { hashPassword } from '#domain/auth/passwords';
import { sendVerificationLink } from '#domain/auth/email-verification';
import { createUser, findUserIdByReferralCode, isDerivedEmail } from '#data/users';
import { emitEvent, userEventData } from '#adapters/events-queue';
import { invalid } from '#platform/errors';
import { logger } from '#http/logger';
import { reply } from '#http/reply';
import type { AccountsCtx } from './types';

const invalidReferral = () => invalid('invalid referral code', 'INVALID_REFERRAL_CODE');

export async function register(ctx: AccountsCtx<'register'>) {
  await requireHuman(ctx.headers, ctx.ip);
  const { email, password, name, referralCode } = ctx.body;
  if (isDerivedEmail(email)) throw invalid('this email address is reserved for accounts the platform derives', 'EMAIL_RESERVED');
  // A new account has no code yet, so a referral can never be the user's own.
  const referrerId = referralCode ? await findUserIdByReferralCode(referralCode) : undefined;
  if (referralCode && !referrerId) throw invalidReferral();

  // The referral is recorded now and paid when the address is confirmed (domain/billing/referrals.ts).
  const user = await createUser({ email, name, passwordHash: await hashPassword(password), referredBy: referrerId });
  // A mail failure must not lose the account: the owner can ask for the link again.
  await sendVerificationLink(user, user.email, 'signup').catch((err) => logger().error('verification email not sent', { error: (err as Error).message }));
  await emitEvent('user.created', userEventData(user, { method: 'credentials', referred: !!referrerId }));
  return reply.created({ id: user.userId, email: user.email, name: user.name });
}
