import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config, type RateLimitRule } from '../config';
import { db, tableName } from '../db/client';
import { keys } from '../db/keys';
import { HttpError } from './errors';

/**
 * Fixed-window counter in DynamoDB: one UpdateItem ADD per request, expired by TTL. Lives in the
 * table, not in memory, because every Lambda container would otherwise count on its own.
 */
export async function consumeRateLimit(scope: string, subject: string, now = Date.now()): Promise<void> {
  const rule: RateLimitRule | undefined = config().rateLimits[scope];
  if (!rule) throw new Error(`unknown rate-limit scope ${scope}`);
  const windowMs = rule.windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.rateLimit(scope, subject, windowStart),
      UpdateExpression: 'ADD #count :one SET #expiresAt = if_not_exists(#expiresAt, :expiresAt)',
      ExpressionAttributeNames: { '#count': 'count', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: { ':one': 1, ':expiresAt': Math.ceil(windowEnd / 1000) + 60 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const count = Number(out.Attributes?.count ?? 0);
  if (count > rule.limit) {
    const retryAfter = Math.max(1, Math.ceil((windowEnd - now) / 1000));
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
