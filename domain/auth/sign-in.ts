import { config } from '#platform/config';
import { CSRF_COOKIE, serializeCookie, SESSION_COOKIE, SESSION_MAX_AGE_SECONDS } from './cookies';
import { sessionIdentity } from './authenticate';
import { csrfTokenFor } from './csrf';
import { issueSessionToken } from './jwt';

/**
 * What every sign-in path (credentials, OAuth, wallet, social) ends with: a 7-day session JWT in an
 * HttpOnly cookie, and the CSRF token bound to it in a readable cookie for the double submit.
 */
export async function startSession(user: { userId: string; email: string; emailVerified?: boolean }) {
  const { token, jti, expiresAt } = await issueSessionToken(sessionIdentity(user));
  const csrfToken = csrfTokenFor(jti);
  const secure = config().cookieSecure;
  return {
    token,
    sessionId: jti,
    csrfToken,
    expiresAt,
    cookies: [
      serializeCookie(SESSION_COOKIE, token, { maxAgeSeconds: SESSION_MAX_AGE_SECONDS, httpOnly: true, secure }),
      serializeCookie(CSRF_COOKIE, csrfToken, { maxAgeSeconds: SESSION_MAX_AGE_SECONDS, httpOnly: false, secure }),
    ],
  };
}

/** Cookies that make the browser forget the session. */
export function endSessionCookies(): string[] {
  const secure = config().cookieSecure;
  return [
    serializeCookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, httpOnly: true, secure }),
    serializeCookie(CSRF_COOKIE, '', { maxAgeSeconds: 0, httpOnly: false, secure }),
  ];
}
