import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { ConditionFailedError, getGlobal, transact, tx } from './tenant';

/**
 * The `SUBDOMAIN#<sub>` look-ups of instances recorded before the edge existed. Such an instance has
 * no look-up item and no `globalKeys`, so the edge cannot route it until its next status change.
 *
 * Why a Scan: nothing lists them otherwise. The only instance listing of gsi1 is the sparse
 * `provisioning` one, which a settled instance has left; the subdomain is a hash of the user id, so
 * no index leads from it back to the account (which also rules out a read-repair at the edge). So
 * the backfill walks the table in bounded pages, keeping its place in one cursor item between
 * passes, and stops for good once a whole sweep found nothing left to do: every instance written
 * since carries its look-up (ensureInstance).
 */

/** What one instance's backfill found. */
export type LookupOutcome =
  /** The look-up was written (or was already ours) and is now listed in the instance's `globalKeys`. */
  | 'written'
  /** Nothing to do: the instance is gone or lists its look-up already. */
  | 'already'
  /** Another account holds the name: left as it is. */
  | 'collision'
  /** The name's holder changed while we looked: tried again by a later sweep. */
  | 'raced';

/**
 * Gives the instance of `userId` its subdomain look-up, in one transaction with its `globalKeys`
 * (so account deletion removes it): the look-up only where no item holds the name, never over
 * another account's; the list only on the instance still there and still without one.
 */
export async function ensureSubdomainLookup(userId: string, subdomain: string): Promise<LookupOutcome> {
  const lookup = keys.agentSubdomain(subdomain);
  const listOnInstance = tx.update(
    keys.instance(userId),
    { expression: 'SET globalKeys = :keys', values: { ':keys': [lookup] } },
    { expression: 'attribute_exists(pk) AND attribute_not_exists(globalKeys)' },
  );
  try {
    await transact([tx.put({ ...lookup, userId }, { expression: 'attribute_not_exists(pk)' }), listOnInstance]);
    return 'written';
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    if (err.reasons[1] === 'ConditionalCheckFailed') return 'already';
  }
  const holder = await getGlobal<{ userId?: string }>(lookup, true);
  if (!holder) return 'raced';
  if (holder.userId !== userId) return 'collision';
  // Ours already (written without the list): only the list is missing.
  try {
    await transact([tx.conditionCheck(lookup, { expression: 'userId = :me', values: { ':me': userId } }), listOnInstance]);
    return 'written';
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return err.reasons[1] === 'ConditionalCheckFailed' ? 'already' : 'raced';
  }
}

/** A position in the table's scan (the last key a page evaluated). */
export type ScanPosition = Record<string, unknown>;

export interface InstancesWithoutLookupPage {
  instances: { userId: string; subdomain: string }[];
  /** Where the next page starts; undefined when this one reached the end of the table. */
  next?: ScanPosition;
}

/** One page of the scan: at most `limit` items evaluated (and at most 1 MB read), the instances without `globalKeys` among them. */
export async function instancesWithoutLookupPage(start: ScanPosition | undefined, limit: number): Promise<InstancesWithoutLookupPage> {
  const out = await db().send(
    new ScanCommand({
      TableName: tableName(),
      Limit: limit,
      ExclusiveStartKey: start,
      FilterExpression: 'sk = :sk AND attribute_not_exists(globalKeys) AND attribute_exists(subdomain)',
      ProjectionExpression: 'userId, subdomain',
      ExpressionAttributeValues: { ':sk': keys.instanceSortKey },
    }),
  );
  const instances = (out.Items ?? []).filter(
    (item): item is { userId: string; subdomain: string } => typeof item.userId === 'string' && typeof item.subdomain === 'string',
  );
  return { instances, next: out.LastEvaluatedKey };
}

/** Where the backfill stands: `passes` orders the writes of the cursor, so two passes at once never move it back. */
export interface BackfillCursor {
  passes: number;
  /** Where the current sweep goes on; absent at the start of a sweep. */
  next?: ScanPosition;
  /** Some instance of the current sweep failed for a passing reason: the sweep is run again rather than declared complete. */
  retry?: boolean;
  /** A whole sweep found nothing left: the backfill is done. */
  completedAt?: string;
}

export async function readBackfillCursor(): Promise<BackfillCursor> {
  const item = await getGlobal<Partial<BackfillCursor>>(keys.subdomainBackfill(), true);
  return { passes: item?.passes ?? 0, next: item?.next, retry: item?.retry, completedAt: item?.completedAt };
}

/** Stores the cursor a pass leaves, unless another pass stored one since `read`; false then. */
export async function saveBackfillCursor(read: BackfillCursor, next: Omit<BackfillCursor, 'passes'>): Promise<boolean> {
  const item: Record<string, unknown> = { ...keys.subdomainBackfill(), passes: read.passes + 1 };
  for (const [field, value] of Object.entries(next)) if (value !== undefined) item[field] = value;
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: item,
        ConditionExpression: read.passes ? 'passes = :read' : 'attribute_not_exists(pk)',
        ExpressionAttributeValues: read.passes ? { ':read': read.passes } : undefined,
      }),
    );
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}
