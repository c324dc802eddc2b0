import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';

/**
 * A sliding-window rate limit in one DynamoDB item per scope and subject. The window is cut into
 * SLICES slices; each request adds one to its slice's counter (`s<index>`) in one UpdateItem that
 * returns every counter, and is admitted when the counters of the last SLICES + 1 slices, its own
 * included, add up to at most the limit. Counting one slice more than the window means the
 * counted span always covers the last full window, so no span of one window ever admits more
 * than `limit` requests: no double burst at a boundary, as a fixed window has.
 *
 * The cost of that guarantee is a little early refusal (the counted span reaches up to one slice,
 * 1/SLICES of the window, further back). A refused request takes its count back with a second
 * write, so a client that keeps retrying too fast is held to the limit instead of locking itself
 * out for good; admitted requests, the common case, cost one write.
 *
 * Concurrent requests are exact: each add returns the sum including every add before it, so of 20
 * racing requests against a limit of 5 exactly 5 see a sum within the limit.
 */

export interface RateDecision {
  allowed: boolean;
  /** Seconds until one more request would fit (set when refused). */
  retryAfterSeconds?: number;
}

const SLICES = 20;

const sliceName = (index: number) => `s${index}`;

/**
 * The names and REMOVE clause of one slice's update depend only on the slice and its length, so a
 * warm container builds them once per slice instead of on every request (the largest part of the
 * pipeline's own CPU on a rate-limited route in a profile, bench/profile-warm.ts). A few windows are in use.
 */
const updateShapes = new Map<string, { names: Record<string, string>; update: string; counted: string[] }>();
const UPDATE_SHAPES_MAX = 32;

function updateShape(current: number, sliceMs: number) {
  const id = `${sliceMs}:${current}`;
  let shape = updateShapes.get(id);
  if (!shape) {
    const oldestCounted = current - SLICES;
    // Slices that fell out of the counted span since the previous request are dropped on the way.
    const stale = Array.from({ length: SLICES }, (_, i) => sliceName(oldestCounted - 1 - i));
    const names: Record<string, string> = { '#now': sliceName(current), '#expiresAt': 'expiresAt' };
    stale.forEach((name, i) => {
      names[`#old${i}`] = name;
    });
    shape = {
      names,
      update: `ADD #now :one SET #expiresAt = :expiresAt REMOVE ${stale.map((_, i) => `#old${i}`).join(', ')}`,
      counted: Array.from({ length: SLICES + 1 }, (_, i) => sliceName(oldestCounted + i)),
    };
    if (updateShapes.size >= UPDATE_SHAPES_MAX) updateShapes.clear();
    updateShapes.set(id, shape);
  }
  return shape;
}

export async function admitRequest(scope: string, subject: string, limit: number, windowSeconds: number, nowMs = Date.now()): Promise<RateDecision> {
  const key = keys.rateLimit(scope, subject);
  const sliceMs = (windowSeconds * 1000) / SLICES;
  const current = Math.floor(nowMs / sliceMs);
  const oldestCounted = current - SLICES;
  const shape = updateShape(current, sliceMs);
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: shape.update,
      // A copy: the shape is shared by every request of the slice, and a command's input is its own.
      ExpressionAttributeNames: { ...shape.names },
      ExpressionAttributeValues: { ':one': 1, ':expiresAt': Math.ceil(nowMs / 1000) + 2 * windowSeconds },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const counts = shape.counted.map((name) => Number(out.Attributes?.[name] ?? 0));
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= limit) return { allowed: true };

  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'ADD #now :minusOne',
      ExpressionAttributeNames: { '#now': sliceName(current) },
      ExpressionAttributeValues: { ':minusOne': -1 },
    }),
  );
  // One more fits once enough of the oldest slices have left the counted span.
  let remaining = total - 1;
  let oldest = 0;
  while (oldest <= SLICES && remaining >= limit) remaining -= counts[oldest++]!;
  const freedAtMs = (oldestCounted + oldest + SLICES) * sliceMs;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freedAtMs - nowMs) / 1000)) };
}
