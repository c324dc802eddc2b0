import { config, type RateLimitRule } from '#platform/config';
import { admitRequest } from '#data/rate-limits';
import { HttpError } from './errors';

/**
 * One write per admitted request in DynamoDB (data/rate-limits.ts: a sliding window,
 * without a fixed window's double burst at the boundary). Lives in the table, not in memory,
 * because every Lambda container would otherwise count on its own.
 */
export async function consumeRateLimit(scope: string, subject: string, now = Date.now()): Promise<void> {
  const rule: RateLimitRule | undefined = config().rateLimits[scope];
  if (!rule) throw new Error(`unknown rate-limit scope ${scope}`);
  const decision = await admitRequest(scope, subject, rule.limit, rule.windowSeconds, now);
  if (!decision.allowed) {
    const retryAfter = decision.retryAfterSeconds ?? 1;
    throw new HttpError(429, 'too many requests', 'RATE_LIMITED', { retryAfter }, { 'retry-after': String(retryAfter) });
  }
}

export const rateLimitSubject = (rule: RateLimitRule, ip: string, userId?: string) => (rule.by === 'user' && userId ? `user:${userId}` : `ip:${ip}`);

/**
 * The same counter for work that must stay invisible to the caller (emails whose sending may not
 * reveal whether an account exists): false instead of a 429 once the window is used up.
 */
export async function underRateLimit(scope: string, subject: string): Promise<boolean> {
  try {
    await consumeRateLimit(scope, subject);
    return true;
  } catch (err) {
    if (err instanceof HttpError && err.status === 429) return false;
    throw err;
  }
}

/** Per-address budgets count the address as the account's email is stored: trimmed, lower-case. */
export const emailSubject = (email: string) => `account:${email.trim().toLowerCase()}`;
