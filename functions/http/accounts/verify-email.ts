import { consumeVerificationToken, sendVerificationLink } from '#domain/auth/email-verification';
import { revokeSessions } from '#domain/auth/session-gate';
import { creditReferralIfDue } from '#domain/billing/referrals';
import { getUser } from '#data/users';
import { emitEvent, userEventData } from '#adapters/events-queue';
import { invalid, notFound } from '#platform/errors';
import type { AccountsCtx } from './types';

export async function verifyEmail(ctx: AccountsCtx<'verifyEmail'>) {
  const { user, purpose } = await consumeVerificationToken(ctx.body.token);
  await creditReferralIfDue(user);
  if (purpose === 'change') {
    // Session tokens carry the email: every one of them names the old address now.
    await revokeSessions(user.userId);
    await emitEvent('user.updated', userEventData(user, { changes: ['email'] }));
  }
  const message = purpose === 'change' ? 'Your new email address is confirmed. Sign in again with it.' : 'Your email address is confirmed.';
  return { message, email: user.email, emailVerified: true as const };
}

export async function resendVerificationEmail(ctx: AccountsCtx<'resendVerificationEmail'>) {
  const user = await getUser(ctx.auth.userId, true);
  if (!user) throw notFound('account not found');
  if (user.pendingEmail) await sendVerificationLink(user, user.pendingEmail, 'change');
  else if (!user.emailVerified) await sendVerificationLink(user, user.email, 'signup');
  else throw invalid('the email address is already confirmed', 'ALREADY_VERIFIED');
  return { message: 'A new confirmation link has been sent.' };
}
