import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';

/**
 * The circuit breaker of one provider's model, one item shared by every container and function
 * (`MODELBREAKER#<breakerId> / STATE`). The rules live in domain/ai/breaker.ts; here only the
 * conditional writes that keep it consistent under concurrency, and bounded:
 *
 * - a failure is one update (two when its window has run out): `failures` counts within the window
 *   that started at `windowStartMs`;
 * - the failure that reaches the threshold opens it (`openedAtMs`), once, by a condition;
 * - after the cool-down one caller claims the probe (`probeUntilMs`, a lease) by a condition, so one
 *   probe runs at a time; its success closes the breaker, its failure opens it again;
 * - a successful call writes nothing, unless it is the probe that closes it.
 *
 * Every write pushes `expiresAt` out, so a breaker that saw no failure for a day is gone.
 */

export interface BreakerRecord {
  failures: number;
  windowStartMs: number;
  lastFailureAtMs?: number;
  /** Set while open (and half-open): when it opened, or when its last probe failed. */
  openedAtMs?: number;
  /** A probe of the primary runs until then. */
  probeUntilMs?: number;
}

const KEEP_SECONDS = 24 * 3600;

const expiresAt = (nowMs: number) => Math.ceil(nowMs / 1000) + KEEP_SECONDS;

const isConditionFailure = (err: unknown) => (err as { name?: string })?.name === 'ConditionalCheckFailedException';

const recordOf = (item: Record<string, unknown> | undefined): BreakerRecord | undefined =>
  item && {
    failures: Number(item.failures ?? 0),
    windowStartMs: Number(item.windowStartMs ?? 0),
    ...(item.lastFailureAtMs !== undefined ? { lastFailureAtMs: Number(item.lastFailureAtMs) } : {}),
    ...(item.openedAtMs !== undefined ? { openedAtMs: Number(item.openedAtMs) } : {}),
    ...(item.probeUntilMs !== undefined ? { probeUntilMs: Number(item.probeUntilMs) } : {}),
  };

async function conditionalUpdate(breakerId: string, update: string, condition: string, values: Record<string, unknown>): Promise<BreakerRecord | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.modelBreaker(breakerId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return recordOf(out.Attributes);
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/** The breaker as stored; undefined when it never failed (or its record expired). */
export async function readBreaker(breakerId: string): Promise<BreakerRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.modelBreaker(breakerId) }));
  return recordOf(out.Item);
}

/** Counts one failure in the current window (a new window when the last one has run out); the record after it. */
export async function countBreakerFailure(breakerId: string, windowMs: number, nowMs = Date.now()): Promise<BreakerRecord> {
  const values = { ':one': 1, ':now': nowMs, ':floor': nowMs - windowMs, ':exp': expiresAt(nowMs) };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const counted = await conditionalUpdate(
      breakerId,
      'SET failures = failures + :one, lastFailureAtMs = :now, expiresAt = :exp',
      'windowStartMs > :floor',
      values,
    );
    if (counted) return counted;
    const restarted = await conditionalUpdate(
      breakerId,
      'SET failures = :one, windowStartMs = :now, lastFailureAtMs = :now, expiresAt = :exp',
      'attribute_not_exists(windowStartMs) OR windowStartMs <= :floor',
      values,
    );
    if (restarted) return restarted;
  }
  throw new Error(`counting a failure of breaker ${breakerId} kept conflicting`);
}

/** Opens a closed breaker; true for the one caller that opened it. */
export async function openBreaker(breakerId: string, nowMs = Date.now()): Promise<boolean> {
  const out = await conditionalUpdate(breakerId, 'SET openedAtMs = :now, expiresAt = :exp REMOVE probeUntilMs', 'attribute_not_exists(openedAtMs)', {
    ':now': nowMs,
    ':exp': expiresAt(nowMs),
  });
  return out !== undefined;
}

/**
 * Claims the probe of an open breaker whose cool-down is over and whose last probe (if any) has
 * ended or run past its lease; true for the one caller that may probe.
 */
export async function claimBreakerProbe(breakerId: string, coolDownMs: number, leaseMs: number, nowMs = Date.now()): Promise<boolean> {
  const out = await conditionalUpdate(
    breakerId,
    'SET probeUntilMs = :until, expiresAt = :exp',
    'openedAtMs <= :cooled AND (attribute_not_exists(probeUntilMs) OR probeUntilMs < :now)',
    { ':until': nowMs + leaseMs, ':cooled': nowMs - coolDownMs, ':now': nowMs, ':exp': expiresAt(nowMs) },
  );
  return out !== undefined;
}

/** The probe succeeded: the breaker closes with an empty window; true for the caller that closed it. */
export async function closeBreaker(breakerId: string, nowMs = Date.now()): Promise<boolean> {
  const out = await conditionalUpdate(
    breakerId,
    'SET failures = :zero, windowStartMs = :now, expiresAt = :exp REMOVE openedAtMs, probeUntilMs',
    'attribute_exists(openedAtMs)',
    { ':zero': 0, ':now': nowMs, ':exp': expiresAt(nowMs) },
  );
  return out !== undefined;
}

/** The probe failed: the breaker stays open for another cool-down from now. */
export async function reopenBreaker(breakerId: string, nowMs = Date.now()): Promise<void> {
  await conditionalUpdate(breakerId, 'SET openedAtMs = :now, lastFailureAtMs = :now, expiresAt = :exp REMOVE probeUntilMs', 'attribute_exists(openedAtMs)', {
    ':now': nowMs,
    ':exp': expiresAt(nowMs),
  });
}
