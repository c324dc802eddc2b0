import * as keys from '../keys';
import { outboundCountUpdate } from '../metrics';
import { ConditionFailedError, tenant, transact, tx } from '../tenant';

/**
 * webhook skill: each message it queued, at `USER#<id> / HOOKMSG#<messageId>`, written before the
 * message is queued and only if the id is new, so a retried call with the same id sends nothing
 * twice. Kept 30 days, like the delivery log.
 */
const MESSAGE_TTL_SECONDS = 30 * 24 * 3600;

export interface WebhookMessage {
  messageId: string;
  endpointId: string;
  type: string;
  queuedAt: string;
}

/** False when a message with this id was already queued. */
export async function recordWebhookMessage(userId: string, message: WebhookMessage): Promise<boolean> {
  try {
    await transact([
      tx.put(
        {
          ...keys.webhookSkillMessage(userId, message.messageId),
          ...message,
          expiresAt: Math.floor(Date.parse(message.queuedAt) / 1000) + MESSAGE_TTL_SECONDS,
        },
        { expression: 'attribute_not_exists(pk)' },
      ),
      outboundCountUpdate(userId, message.queuedAt, { webhookMessages: 1 }),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function getWebhookMessage(userId: string, messageId: string): Promise<WebhookMessage | undefined> {
  const item = await tenant(userId).get<WebhookMessage & Record<string, unknown>>(keys.webhookSkillMessage(userId, messageId), true);
  return item && { messageId: item.messageId, endpointId: item.endpointId, type: item.type, queuedAt: item.queuedAt };
}

/** Undoes the record of a message that could not be queued, so the same id can be sent again. */
export async function forgetWebhookMessage(userId: string, messageId: string): Promise<void> {
  const message = await getWebhookMessage(userId, messageId);
  if (!message) return;
  try {
    await transact([
      tx.delete(keys.webhookSkillMessage(userId, messageId), { expression: 'attribute_exists(pk)' }),
      outboundCountUpdate(userId, message.queuedAt, { webhookMessages: -1 }),
    ]);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}
