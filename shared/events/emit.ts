import { randomUUID } from 'node:crypto';
import { sendJson } from '../adapters/queue';
import { config } from '../config';
import { logger } from '../http/logger';

export type PlatformEventType = 'user.created' | 'user.updated' | 'user.deleted';

export interface PlatformEvent {
  /** Unique per event; the webhook `webhook-id`, so receivers can drop duplicates. */
  id: string;
  type: PlatformEventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Queues a webhook event for delivery (spec section 6). Delivery happens elsewhere, with retries
 * and a DLQ; a queue outage is logged and never fails the request that emitted the event.
 */
export async function emitEvent(type: PlatformEventType, data: Record<string, unknown>): Promise<PlatformEvent> {
  const event: PlatformEvent = { id: `evt_${randomUUID().replaceAll('-', '')}`, type, timestamp: new Date().toISOString(), data };
  const queueUrl = config().eventsQueueUrl;
  if (!queueUrl) {
    logger().warn('EVENTS_QUEUE_URL not set; event not queued', { type, eventId: event.id });
    return event;
  }
  try {
    await sendJson(queueUrl, event);
  } catch (err) {
    logger().error('could not queue event', { type, eventId: event.id, error: (err as Error).message });
  }
  return event;
}

/**
 * The `data` of every user event: the account's id, email and name (never a hash, token or key),
 * plus what the event adds: `method` on user.created (`credentials`, `wallet`, `codehost`,
 * `webid`, `social`), `changes` on user.updated (the fields that changed), nothing on user.deleted.
 */
export const userEventData = (user: { userId: string; email: string; name: string }, extra: Record<string, unknown> = {}) => ({
  userId: user.userId,
  email: user.email,
  name: user.name,
  ...extra,
});
