import { randomUUID } from 'node:crypto';
import { sendJson } from './queue';
import { config } from '#platform/config';
import { DomainError } from '#platform/errors';
import type { ACCOUNT_EVENT_TYPES } from '#contract/webhooks';
import { logger } from '#platform/logger';

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
  /** Set on a retry or a redelivery: the one endpoint it is for, and when (never sent to receivers). */
  delivery?: DeliveryDirective;
}

export interface DeliveryDirective {
  /** An account endpoint's id, or the hash of an operator endpoint's URL. */
  target: string;
  /** The step of the retry schedule (1 = the first attempt). */
  step: number;
  dueAt: string;
  /** A redelivery the owner asked for: one attempt, outside the schedule. */
  manual?: boolean;
}

/** SQS's longest message delay: a longer wait is chained through several messages (see the delivery worker). */
const MAX_SQS_DELAY_SECONDS = 900;

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
 * Queues an event for `delivery.dueAt` (a retry or a redelivery). SQS delays a message 15 minutes
 * at most, so a later one arrives early and the worker queues it again for the rest: one message
 * per 15 minutes of waiting, and a crash between links loses nothing SQS holds.
 */
export async function queueDelivery(event: PlatformEvent & { delivery: DeliveryDirective }): Promise<void> {
  const queueUrl = config().eventsQueueUrl;
  if (!queueUrl) throw new DomainError('unavailable', 'webhook deliveries are not configured (no events queue)', 'EVENTS_QUEUE_NOT_CONFIGURED');
  const delaySeconds = Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil((Date.parse(event.delivery.dueAt) - Date.now()) / 1000)));
  await sendJson(queueUrl, event, { delaySeconds });
}

/**
 * Queues the owner's redelivery of one event to one of the account's endpoints: one attempt now,
 * outside the automatic retry schedule, with the event's own id (the `webhook-id`).
 */
export function queueRedelivery(event: PlatformEvent, endpointId: string): Promise<void> {
  return queueDelivery({ ...event, delivery: { target: endpointId, step: 1, dueAt: new Date().toISOString(), manual: true } });
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
