import { setTimeout } from 'node:timers/promises';
import { BOT_CHECK_HEADER, botCheckEnabled, requireHuman } from '#adapters/bot-check';
import { checkPassword } from '#domain/auth/passwords';
import { startSession, endSessionCookies } from '#domain/auth/sign-in';
import { evictCredentials } from '#domain/auth/evict';
import { csrfTokenFor } from '#domain/auth/csrf';
import { config, signInTimingConfig } from '#platform/config';
import { knownSignInAddresses, recordSignInFailure, recordSignInSuccess, signInFailures } from '#data/sign-in-attempts';
import { accountView, findUserIdByEmail, getUser, normaliseEmail } from '#data/users';
import { CSRF_COOKIE, serializeCookie, SESSION_MAX_AGE_SECONDS } from '#http/cookies';
import { forbidden, invalid, limitReached, unauthenticated } from '#platform/errors';
import { reply } from '#http/reply';
import type { AccountsCtx } from './types';

const invalidCredentials = () => unauthenticated('Invalid email or password', 'INVALID_CREDENTIALS');

/**
 * Email and password sign-in. Unknown accounts, accounts without a password and wrong passwords all
 * do the same hashing work and get the same 401. Only failures are counted (after the password
 * check): per account and address, where the limit answers 429 before any password is checked, and
 * per account across all addresses, where the cap slows an unfamiliar address with the bot check
 * (or a delay) instead of refusing, so guessing from many addresses never locks the owner out of
 * an address they signed in from before.
 */
export async function signInWithCredentials(ctx: AccountsCtx<'signInWithCredentials'>) {
  const email = normaliseEmail(ctx.body.email);
  const now = Date.now();
  const userId = await findUserIdByEmail(email);
  const [failures, known] = await Promise.all([signInFailures(email, ctx.ip, now), userId ? knownSignInAddresses(userId, now) : []]);
  if (failures.address.count >= failures.address.limit) {
    const retryAfter = Math.max(1, Math.ceil((failures.address.windowEnd - now) / 1000));
    throw limitReached('too many failed sign-ins from this address', 'RATE_LIMITED', { retryAfter }, { retryAfterSeconds: retryAfter });
  }
  const familiar = known.some((a) => a.ip === ctx.ip);
  if (!familiar && failures.account.count >= failures.account.limit) await slowDown(ctx);
  const user = userId ? await getUser(userId, true) : undefined;
  const ok = await checkPassword(user?.passwordHash, ctx.body.password);
  if (!user || !ok) {
    await recordSignInFailure(email, ctx.ip, now);
    throw invalidCredentials();
  }
  await recordSignInSuccess(user.userId, email, ctx.ip, known, now);
  const session = await startSession(user);
  return reply.json(200, { user: accountView(user) }, {}, session.cookies);
}

/** Past the account's failure cap: a solved bot check when bot detection is on, otherwise a wait. */
async function slowDown(ctx: AccountsCtx<'signInWithCredentials'>) {
  if (!botCheckEnabled()) return setTimeout(signInTimingConfig().signInCappedDelayMs);
  if (!ctx.headers[BOT_CHECK_HEADER]?.trim()) {
    throw forbidden(`too many failed sign-ins for this account: solve the bot check and send its token in ${BOT_CHECK_HEADER}`, 'BOT_CHECK_REQUIRED');
  }
  await requireHuman(ctx.headers, ctx.ip);
}

/**
 * Clears the session cookies. The session JWT itself is stateless: a copy kept elsewhere stays
 * valid until it expires, unless `?everywhere=true`, which revokes every session of the account.
 */
export async function signOut(ctx: AccountsCtx<'signOut'>) {
  if (ctx.query.everywhere === 'true' && ctx.auth) {
    await evictCredentials(ctx.auth.userId, { sessions: true, apiKeys: ctx.body.revokeApiKeys === true, gatewayToken: true, reason: 'sign-out everywhere' });
  }
  return reply.json(200, { success: true }, {}, endSessionCookies());
}

export async function getCsrfToken(ctx: AccountsCtx<'getCsrfToken'>) {
  if (!ctx.auth.sessionId) throw invalid('API-key requests need no CSRF token', 'NO_SESSION');
  const csrfToken = csrfTokenFor(ctx.auth.sessionId);
  const cookie = serializeCookie(CSRF_COOKIE, csrfToken, { maxAgeSeconds: SESSION_MAX_AGE_SECONDS, httpOnly: false, secure: config().cookieSecure });
  return reply.json(200, { csrfToken }, {}, [cookie]);
}
