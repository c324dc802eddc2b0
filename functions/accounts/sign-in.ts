import { checkPassword } from '../../shared/auth/passwords';
import { startSession, endSessionCookies } from '../../shared/auth/sign-in';
import { evictCredentials } from '../../shared/auth/evict';
import { csrfTokenFor } from '../../shared/auth/csrf';
import { config } from '../../shared/config';
import { accountView, findUserIdByEmail, getUser, normaliseEmail } from '../../shared/db/users';
import { CSRF_COOKIE, serializeCookie, SESSION_MAX_AGE_SECONDS } from '../../shared/http/cookies';
import { badRequest, HttpError } from '../../shared/http/errors';
import { consumeRateLimit } from '../../shared/http/rate-limit';
import { reply } from '../../shared/http/reply';
import type { AccountsCtx } from './types';

const invalidCredentials = () => new HttpError(401, 'Invalid email or password', 'INVALID_CREDENTIALS');

/**
 * Email and password sign-in. Besides the per-address limit of the route, attempts are counted per
 * account, so guessing one account's password from many addresses is stopped too. Unknown
 * accounts, accounts without a password and wrong passwords all do the same hashing work and get
 * the same 401.
 */
export async function signInWithCredentials(ctx: AccountsCtx<'signInWithCredentials'>) {
  const email = normaliseEmail(ctx.body.email);
  await consumeRateLimit('signInAccount', `account:${email}`);
  const userId = await findUserIdByEmail(email);
  const user = userId ? await getUser(userId, true) : undefined;
  const ok = await checkPassword(user?.passwordHash, ctx.body.password);
  if (!user || !ok) throw invalidCredentials();
  const session = await startSession(user);
  return reply.json(200, { user: accountView(user) }, {}, session.cookies);
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
  if (!ctx.auth.sessionId) throw badRequest('API-key requests need no CSRF token', 'NO_SESSION');
  const csrfToken = csrfTokenFor(ctx.auth.sessionId);
  const cookie = serializeCookie(CSRF_COOKIE, csrfToken, { maxAgeSeconds: SESSION_MAX_AGE_SECONDS, httpOnly: false, secure: config().cookieSecure });
  return reply.json(200, { csrfToken }, {}, [cookie]);
}
