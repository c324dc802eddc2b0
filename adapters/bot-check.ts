import { botCheckConfig } from '#platform/config';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';

/**
 * Bot detection for sign-up and forgot-password (spec 4.1 rule 3). The browser solves a challenge
 * (Turnstile, reCAPTCHA, hCaptcha: they share the siteverify wire format) and sends its token in
 * the `x-bot-check-token` header; the server posts it with the secret to the verify URL and gets
 * `{success: boolean}` back. Off when BOT_CHECK_VERIFY_URL is unset (the local stack's default).
 */
export const BOT_CHECK_HEADER = 'x-bot-check-token';
export const BOT_CHECK_TIMEOUT_MS = 5000;
/** Turnstile tokens are at most 2048 characters; anything longer is not a token. */
const MAX_TOKEN_LENGTH = 4096;

export const botCheckEnabled = () => !!botCheckConfig().verifyUrl;

const blocked = () => new DomainError('forbidden', 'bot check failed', 'BOT_DETECTED');
const unavailable = () => new DomainError('unavailable', 'bot check is unavailable, try again shortly', 'BOT_CHECK_UNAVAILABLE');

/** True when the verify service accepts the token. Throws when the service cannot answer. */
export async function verifyBotToken(token: string, remoteIp: string): Promise<boolean> {
  const { verifyUrl, secret } = botCheckConfig();
  if (!verifyUrl) return true;
  if (!secret) throw new Error('BOT_CHECK_SECRET is not configured');
  const res = await fetch(verifyUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ secret, response: token, remoteip: remoteIp }),
    signal: AbortSignal.timeout(BOT_CHECK_TIMEOUT_MS),
    redirect: 'error',
  });
  if (!res.ok) throw new Error(`verify service answered ${res.status}`);
  const body = (await res.json()) as { success?: unknown };
  return body?.success === true;
}

/**
 * Lets the request through, or throws 403 `BOT_DETECTED` (no, bad or refused token) or 503 when
 * the verify service is down or misconfigured: failing closed, but never as a 500.
 */
export async function requireHuman(headers: Record<string, string | undefined>, ip: string): Promise<void> {
  if (!botCheckEnabled()) return;
  const token = headers[BOT_CHECK_HEADER]?.trim();
  if (!token || token.length > MAX_TOKEN_LENGTH) throw blocked();
  let passed: boolean;
  try {
    passed = await verifyBotToken(token, ip);
  } catch (err) {
    logger().error('bot check could not be verified', { error: (err as Error).message });
    throw unavailable();
  }
  if (!passed) throw blocked();
}
