import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '#platform/logger';
import { db, tableName } from './client';
import type { Key } from './keys';

/**
 * Paid-for work that must be served exactly once (an MPP payment, a prepaid card receipt): the
 * record is redeemable until one serve succeeds. Each serve holds a lease taken by a DynamoDB
 * condition, so parallel redemptions never serve twice; a serve that fails gives the lease back,
 * and one that died (a crashed container) frees the record when its lease runs out.
 */

/** Lambda's longest run: a serve still holding its lease past this has died. */
export const SERVE_LEASE_MS = 15 * 60_000;
/** Served records are kept a week for support questions. */
const SERVED_RETENTION_SECONDS = 7 * 24 * 3600;

export interface LeaseCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

export const newLease = (now: number) => ({ leaseId: randomUUID(), leaseUntil: now + SERVE_LEASE_MS });

/** The lease of a record that still satisfies `condition` and holds no live lease; undefined when another serve has it or the condition fails. */
export async function takeServeLease(key: Key, condition: LeaseCondition, now = Date.now()): Promise<string | undefined> {
  const { leaseId, leaseUntil } = newLease(now);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET leaseUntil = :leaseUntil, leaseId = :leaseId',
        ConditionExpression: `(${condition.expression}) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :leaseNow)`,
        ExpressionAttributeNames: condition.names,
        ExpressionAttributeValues: { ...condition.values, ':leaseUntil': leaseUntil, ':leaseId': leaseId, ':leaseNow': now },
      }),
    );
    return leaseId;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw err;
  }
}

/** The work was served: the record is done for good. Only the lease holder may close it. */
async function markServed(key: Key, leaseId: string, now: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET #status = :served, servedAt = :at, expiresAt = :ttl REMOVE leaseUntil, leaseId',
      ConditionExpression: 'leaseId = :leaseId',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':served': 'served',
        ':at': new Date(now).toISOString(),
        ':ttl': Math.ceil(now / 1000) + SERVED_RETENTION_SECONDS,
        ':leaseId': leaseId,
      },
    }),
  );
}

/** The serve failed: give the lease back so the same payment can be served on a retry. */
async function releaseLease(key: Key, leaseId: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'REMOVE leaseUntil, leaseId',
      ConditionExpression: 'leaseId = :leaseId',
      ExpressionAttributeValues: { ':leaseId': leaseId },
    }),
  );
}

/** Runs `serve` under the lease: a success marks the record served, a failure releases it and rethrows. */
export async function serveUnderLease<T>(key: Key, leaseId: string, what: string, serve: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await serve();
  } catch (err) {
    await releaseLease(key, leaseId).catch((e: Error) => logger().warn(`could not release a ${what} serve lease`, { error: e.name }));
    throw err;
  }
  await markServed(key, leaseId, Date.now()).catch((e: Error) => logger().error(`could not mark a ${what} served`, { error: e.name }));
  return result;
}
