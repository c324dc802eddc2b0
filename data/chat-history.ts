import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { StoredMessage } from './agents';
import { db, tableName } from './client';
import * as keys from './keys';

/** One page of an agent's messages, newest first, strictly before `before` (ISO time) when given. */
export async function messagesBefore(userId: string, agentId: string, limit: number, before?: string) {
  const prefix = keys.agentMessagePrefix(agentId);
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':from': prefix, ':to': before ? `${prefix}${before}` : `${prefix}\uffff` },
      ScanIndexForward: false,
      Limit: limit + 1,
    }),
  );
  const items = ((out.Items ?? []) as StoredMessage[]).filter((m) => !before || m.createdAt < before);
  const page = items.slice(0, limit).map(({ id, role, content, createdAt }) => ({ id, role, content, createdAt }));
  return { messages: page, hasMore: items.length > limit, nextBefore: items.length > limit ? page.at(-1)!.createdAt : null };
}
