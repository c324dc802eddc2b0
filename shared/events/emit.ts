import { randomUUID } from 'node:crypto';
import { sendJson } from '../adapters/queue';
import { config } from '../config';
import { DomainError } from '../errors';
import type { ACCOUNT_EVENT_TYPES } from '../contract/webhooks';
import { logger } from '../logger';

export type UserEventType = 'user.created' | 'user.updated' | 'user.deleted';

/** Lifecycle events of an account's instance and agents, delivered to the account's own webhook endpoints. */
export type LifecycleEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/** An event the webhook skill sends for a user: any dotted type the user names (`show.announced`). */
export type MessageEventType = `${string}.${string}`;

export type PlatformEventType = UserEventType | LifecycleEventType;

export interface PlatformEvent {
  /** Unique per event; the webhook `webhook-id`, so receivers can drop duplicates. */
  id: string;
  type: PlatformEventType | MessageEventType;
  timestamp: string;
  data: Record<string, unknown>;
  /** Set on account events: they go to this account's own endpoints, not the operator's. */
  accountId?: string;
  /** Set on the webhook skill's messages: they go to this one endpoint of the account. */
  endpointId?: string;
}

/**
 * Queues a webhook event for delivery (spec section 6). Delivery happens elsewhere, with retries
 * and a DLQ; a queue outage is logged and never fails the request that emitted the event.
 */
export async function emitEvent(type: UserEventType, data: Record<string, unknown>): Promise<PlatformEvent> {
  return queueEvent({ id: `evt_${randomUUID().replaceAll('-', '')}`, type, timestamp: new Date().toISOString(), data });
}

/** Queues an account event (already stored in the account's event log under the same id) for the account's endpoints. */
export function emitAccountEvent(accountId: string, event: Omit<PlatformEvent, 'accountId'>): Promise<PlatformEvent> {
  return queueEvent({ ...event, accountId });
}

/**
 * Queues a message of the webhook skill for one endpoint of the account. Unlike the platform's own
 * events, a message that cannot be queued fails the call: the user asked for exactly this delivery.
 */
export async function queueEndpointMessage(accountId: string, endpointId: string, event: Omit<PlatformEvent, 'accountId' | 'endpointId'>): Promise<void> {
  const queueUrl = config().eventsQueueUrl;
  if (!queueUrl) throw new DomainError('unavailable', 'webhook deliveries are not configured (no events queue)', 'EVENTS_QUEUE_NOT_CONFIGURED');
  await sendJson(queueUrl, { ...event, accountId, endpointId });
}

/**
 * Queues the owner's redelivery of one event to one of the account's endpoints: one attempt now,
 * outside the automatic retry schedule, with the event's own id (the `webhook-id`).
 */
export async function queueRedelivery(event: PlatformEvent, endpointId: string): Promise<void> {
  const queueUrl = config().eventsQueueUrl;
  if (!queueUrl) throw new DomainError('unavailable', 'webhook deliveries are not configured (no events queue)', 'EVENTS_QUEUE_NOT_CONFIGURED');
  await sendJson(queueUrl, { ...event, delivery: { target: endpointId, step: 1, dueAt: new Date().toISOString(), manual: true } });
}

async function queueEvent(event: PlatformEvent): Promise<PlatformEvent> {
  const { type } = event;
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
