import { requireHuman } from '../../shared/adapters/bot-check';
import { hashPassword } from '../../shared/auth/passwords';
import { creditEntryId, creditItems } from '../../shared/billing/credits';
import { config } from '../../shared/config';
import { ConditionFailedError } from '../../shared/db/tenant';
import { createUser, EmailTakenError, findUserIdByReferralCode, isDerivedEmail, newUserId, type NewUser } from '../../shared/db/users';
import { emitEvent, userEventData } from '../../shared/events/emit';
import { badRequest, conflict } from '../../shared/http/errors';
import { reply } from '../../shared/http/reply';
import type { AccountsCtx } from './types';

const invalidReferral = () => badRequest('invalid referral code', 'INVALID_REFERRAL_CODE');

/**
 * The referral bonus, in the account's own creation transaction: the new user's starting balance
 * and ledger entry, and the referrer's credit. A user is created once, so each referral pays once;
 * the referrer's entry id names the new user as well, so it could not be applied twice anyway.
 */
function referralCredit(userId: string, referrerId: string, now: Date): Pick<NewUser, 'initialCredit' | 'extraItems'> {
  const amount = config().referralCredits;
  if (amount === 0) return {};
  const at = now.getTime();
  return {
    initialCredit: { amount, reason: 'referral', entryId: creditEntryId(at, 'referral-bonus'), note: 'signed up with a referral code' },
    extraItems: creditItems(referrerId, amount, 'referral', creditEntryId(at, `referral-${userId}`), `referred ${userId}`, now),
  };
}

export async function register(ctx: AccountsCtx<'register'>) {
  await requireHuman(ctx.headers, ctx.ip);
  const { email, password, name, referralCode } = ctx.body;
  if (isDerivedEmail(email)) throw badRequest('this email address is reserved for accounts the platform derives', 'EMAIL_RESERVED');
  // A new account has no code yet, so a referral can never be the user's own.
  const referrerId = referralCode ? await findUserIdByReferralCode(referralCode) : undefined;
  if (referralCode && !referrerId) throw invalidReferral();

  const userId = newUserId();
  const now = new Date();
  let user;
  try {
    user = await createUser({
      userId,
      email,
      name,
      passwordHash: await hashPassword(password),
      referredBy: referrerId,
      ...(referrerId ? referralCredit(userId, referrerId, now) : {}),
    }, now);
  } catch (err) {
    if (err instanceof EmailTakenError) throw conflict('an account with this email already exists', 'USER_EXISTS');
    // Only the referrer's items can fail a condition otherwise: the referrer was deleted a moment ago.
    if (err instanceof ConditionFailedError && err.reasons.includes('ConditionalCheckFailed')) throw invalidReferral();
    throw err;
  }
  await emitEvent('user.created', userEventData(user, { method: 'credentials', referred: !!referrerId }));
  return reply.created({ id: user.userId, email: user.email, name: user.name });
}
