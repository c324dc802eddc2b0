import { createHmac, timingSafeEqual } from 'node:crypto';
import { config } from '#platform/config';

/**
 * Signed double-submit: the token is an HMAC of the session's token id, set as a readable cookie
 * and echoed by the client in `x-csrf-token`. Both must match each other and the session, so a
 * cookie planted by a sibling subdomain cannot be replayed against another session.
 */
export function csrfTokenFor(sessionJti: string): string {
  const secret = config().jwt.secret ?? '';
  return createHmac('sha256', secret).update(`csrf:${sessionJti}`).digest('base64url');
}

export function csrfTokenMatches(sessionJti: string, cookieValue: string | undefined, headerValue: string | undefined): boolean {
  if (!cookieValue || !headerValue) return false;
  const expected = Buffer.from(csrfTokenFor(sessionJti));
  const a = Buffer.from(cookieValue);
  const b = Buffer.from(headerValue);
  return a.length === expected.length && b.length === expected.length && timingSafeEqual(a, expected) && timingSafeEqual(b, expected);
}
