import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';

/** One page of a sharded due index in gsi1: the items of `partition` due at `now` (`gsi1sk` an ISO time), oldest first. */
export async function dueInIndex<T>(partition: string, now: Date, limit: number): Promise<T[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p AND gsi1sk <= :now',
      ExpressionAttributeValues: { ':p': partition, ':now': now.toISOString() },
      Limit: limit,
    }),
  );
  return (out.Items ?? []) as T[];
}
