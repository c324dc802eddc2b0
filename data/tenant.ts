import {
  type QueryCommandInput,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import type { Key } from './keys';
import { DomainError } from '#platform/errors';

/** A write lost a race or broke a rule the database settles (unique email, plan limit, state). */
export class ConditionFailedError extends Error {
  constructor(
    message: string,
    /** For transactions: the cancellation reason code of each item, in order ('None' when it passed). */
    readonly reasons: string[] = [],
  ) {
    super(message);
  }
}

/** The cursor handed to a client could not have come from us for this partition. */
export class InvalidCursorError extends DomainError {
  constructor() {
    super('invalid', 'invalid cursor', 'INVALID_CURSOR');
  }
}

type Item = Record<string, unknown>;
export type Condition = { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

function rethrowCondition(err: unknown): never {
  const name = (err as { name?: string })?.name;
  if (name === 'ConditionalCheckFailedException') throw new ConditionFailedError('condition failed');
  if (name === 'TransactionCanceledException') {
    const reasons = ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
    if (reasons.some((r) => r === 'ConditionalCheckFailed')) throw new ConditionFailedError('transaction condition failed', reasons);
  }
  throw err;
}

/** All-or-nothing writes across partitions, e.g. a profile and its `EMAIL#` uniqueness item. */
export async function transact(items: TransactItem[], clientRequestToken?: string): Promise<void> {
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: clientRequestToken }));
  } catch (err) {
    rethrowCondition(err);
  }
}

/** Transaction item builders, so callers never spell out the table name. */
export const tx = {
  put: (item: Item & Key, condition?: Condition): TransactItem => ({
    Put: { TableName: tableName(), Item: item, ...conditionParams(condition) },
  }),
  delete: (key: Key, condition?: Condition): TransactItem => ({
    Delete: { TableName: tableName(), Key: key, ...conditionParams(condition) },
  }),
  update: (key: Key, update: Condition, condition?: Condition): TransactItem => {
    const merged = mergeExpressions(update, condition);
    return {
      Update: {
        TableName: tableName(),
        Key: key,
        UpdateExpression: update.expression,
        ConditionExpression: condition?.expression,
        ExpressionAttributeNames: merged.names,
        ExpressionAttributeValues: merged.values,
      },
    };
  },
  conditionCheck: (key: Key, condition: Condition): TransactItem => ({
    ConditionCheck: {
      TableName: tableName(),
      Key: key,
      ConditionExpression: condition.expression,
      ExpressionAttributeNames: condition.names,
      ExpressionAttributeValues: condition.values,
    },
  }),
};

function conditionParams(condition?: Condition) {
  if (!condition) return {};
  return {
    ConditionExpression: condition.expression,
    ExpressionAttributeNames: condition.names,
    ExpressionAttributeValues: condition.values,
  } as { ConditionExpression: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> };
}

function mergeExpressions(a: Condition, b?: Condition) {
  const names = { ...a.names, ...b?.names };
  const values = { ...a.values, ...b?.values };
  return {
    names: Object.keys(names).length ? names : undefined,
    values: Object.keys(values).length ? values : undefined,
  };
}

/**
 * Every item a Query matches, page after page: the one paging loop of the data layer. Callers give
 * the key condition (and optionally a filter, consistency, an index); the table name is ours.
 */
export async function queryEvery<T extends Item>(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<T[]> {
  const all: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(new QueryCommand({ ...input, TableName: tableName(), ExclusiveStartKey: start }));
    all.push(...((out.Items ?? []) as T[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return all;
}

const encodeCursor = (k: Record<string, unknown> | undefined) => (k ? Buffer.from(JSON.stringify(k)).toString('base64url') : undefined);

/**
 * The tenant-scoped repository: every read and write is inside `USER#<userId>`. Keys must come from
 * `keys.*` with the same userId; a key from another partition is a programming error and throws
 * before any I/O, so no request can be steered into another tenant's data.
 */
export function tenant(userId: string) {
  if (!userId) throw new Error('tenant() needs a userId');
  const pk = keys.userPartition(userId);
  const own = (key: Key): Key => {
    if (key.pk !== pk) throw new Error('key outside the caller partition');
    return key;
  };

  return {
    userId,
    pk,

    async get<T extends Item>(key: Key, consistent = false): Promise<(T & Key) | undefined> {
      const out = await db().send(new GetCommand({ TableName: tableName(), Key: own(key), ConsistentRead: consistent }));
      return out.Item as (T & Key) | undefined;
    },

    async put(item: Item & Key, condition?: Condition): Promise<void> {
      own(item);
      try {
        await db().send(new PutCommand({ TableName: tableName(), Item: item, ...conditionParams(condition) }));
      } catch (err) {
        rethrowCondition(err);
      }
    },

    /** `update` is an UpdateExpression with its names and values; returns the item after the update. */
    async update<T extends Item>(key: Key, update: Condition, condition?: Condition): Promise<T & Key> {
      const merged = mergeExpressions(update, condition);
      try {
        const out = await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: own(key),
            UpdateExpression: update.expression,
            ConditionExpression: condition?.expression,
            ExpressionAttributeNames: merged.names,
            ExpressionAttributeValues: merged.values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        return out.Attributes as T & Key;
      } catch (err) {
        rethrowCondition(err);
      }
    },

    /** Returns the deleted item, or undefined when there was none (or the condition failed → throws). */
    async delete<T extends Item>(key: Key, condition?: Condition): Promise<(T & Key) | undefined> {
      try {
        const out = await db().send(new DeleteCommand({ TableName: tableName(), Key: own(key), ReturnValues: 'ALL_OLD', ...conditionParams(condition) }));
        return out.Attributes as (T & Key) | undefined;
      } catch (err) {
        rethrowCondition(err);
      }
    },

    /** One page of the items whose sort key starts with `prefix`, with an opaque cursor for the next. */
    async query<T extends Item>(prefix: string, opts: { limit?: number; cursor?: string; newestFirst?: boolean } = {}) {
      let start: Record<string, unknown> | undefined;
      if (opts.cursor) {
        try {
          start = JSON.parse(Buffer.from(opts.cursor, 'base64url').toString('utf8'));
        } catch {
          throw new InvalidCursorError();
        }
        if (!start || start.pk !== pk || typeof start.sk !== 'string' || !start.sk.startsWith(prefix)) throw new InvalidCursorError();
      }
      const out = await db().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
          Limit: opts.limit,
          ExclusiveStartKey: start,
          ScanIndexForward: !opts.newestFirst,
        }),
      );
      return { items: (out.Items ?? []) as (T & Key)[], cursor: encodeCursor(out.LastEvaluatedKey) };
    },

    /**
     * Every item whose sort key starts with `prefix` ('' = the whole partition), page by page
     * (bounded by what one user owns). `consistent` sees every write acknowledged before it.
     */
    async queryAll<T extends Item>(prefix: string, opts: { consistent?: boolean } = {}): Promise<(T & Key)[]> {
      return queryEvery<T & Key>({
        KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: prefix ? { ':pk': pk, ':prefix': prefix } : { ':pk': pk },
        ConsistentRead: opts.consistent,
      });
    },

    /** Every item with `from <= sk <= to`, oldest first (time-ordered sort keys). */
    async queryBetween<T extends Item>(from: string, to: string): Promise<(T & Key)[]> {
      return queryEvery<T & Key>({
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      });
    },
  };
}

export type TenantStore = ReturnType<typeof tenant>;

/** Reads of the global look-up partitions (`EMAIL#`, `APIKEY#`, `NONCE#`...), which belong to no tenant. */
export async function getGlobal<T extends Item>(key: Key, consistent = false): Promise<(T & Key) | undefined> {
  if (key.pk.startsWith('USER#')) throw new Error('use tenant(userId) for user partitions');
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: consistent }));
  return out.Item as (T & Key) | undefined;
}
