import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import type { LocalCheckoutRecord, LocalSubscriptionRecord } from '#adapters/card-local';

const SESSION_TTL_SECONDS = 24 * 3600;

export async function saveLocalCheckout(record: LocalCheckoutRecord): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.localCheckout(record.sessionId), ...record, expiresAt: record.createdAt + SESSION_TTL_SECONDS },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** Takes the session once: a second completion (a double click, a replay) finds nothing. */
export async function takeLocalCheckout(sessionId: string, nowSeconds: number): Promise<LocalCheckoutRecord | undefined> {
  try {
    const out = await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.localCheckout(sessionId),
        ConditionExpression: 'attribute_exists(pk) AND expiresAt > :now',
        ExpressionAttributeValues: { ':now': nowSeconds },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes as LocalCheckoutRecord | undefined;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw err;
  }
}

/** Reads a session without taking it (the page shows what is being bought). */
export async function peekLocalCheckout(sessionId: string): Promise<LocalCheckoutRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.localCheckout(sessionId), ConsistentRead: true }));
  return out.Item as LocalCheckoutRecord | undefined;
}

/** The local processor's subscription, replaced whole on every change (one writer: the local stack). */
export async function saveLocalSubscription(record: LocalSubscriptionRecord): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.localSubscription(record.subscriptionId), ...record } }));
}

export async function getLocalSubscription(subscriptionId: string): Promise<LocalSubscriptionRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.localSubscription(subscriptionId), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const { pk: _pk, sk: _sk, ...record } = out.Item;
  return record as LocalSubscriptionRecord;
}
