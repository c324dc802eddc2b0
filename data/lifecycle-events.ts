import { randomBytes } from 'node:crypto';
import { emitAccountEvent, type LifecycleEventType } from '#adapters/events-queue';
import * as keys from './keys';
import { tenant, tx, type TransactItem } from './tenant';

/**
 * The lifecycle event log of an account (`USER#<id> / LCEVENT#<time>#<random>`): every transition
 * of its instance and agents with time, operation id and cause. Each stored event is also queued
 * as an account webhook under the same id, so the log and the deliveries tell one story.
 */

/** Kept 90 days; `GET /api/instance/{userId}/events` pages through what is left. */
const EVENT_TTL_SECONDS = 90 * 24 * 3600;

/** Who caused a transition: the account owner over the API, or the platform itself. */
export type EventCause =
  | 'user'
  | 'provisioner'
  | 'health-check'
  | 'heartbeat'
  | 'dead-letter'
  | 'account-deletion'
  | 'self-heal'
  | 'reconciler'
  | 'budget'
  | 'loop-breaker'
  | 'billing'
  | 'idle'
  | 'schedule'
  | 'wake'
  | 'model-provider';

export interface LifecycleEventInput {
  type: LifecycleEventType;
  cause: EventCause;
  operationId?: string;
  /** The lifecycle operation (start, stop, restart, update, repair, reset-memory, launch). */
  op?: string;
  generation?: number;
  /** Status of the instance (or agent) after the event. */
  status?: string;
  reason?: string;
  agentId?: string;
  image?: string;
  runtimeVersion?: string;
  /** Budget and schedule events: the scope, cap and spend, or the schedule and run. */
  details?: Record<string, unknown>;
}

export interface LifecycleEvent extends LifecycleEventInput {
  id: string;
  at: string;
}

interface StoredEvent extends LifecycleEvent, Record<string, unknown> {
  expiresAt: number;
}

/** `sequence` keeps the events of one write (superseded, then requested) in the order they were given. */
function build(input: LifecycleEventInput, now: Date, sequence = 0): { event: LifecycleEvent; sortId: string } {
  const id = `evt_${randomBytes(12).toString('hex')}`;
  const at = now.toISOString();
  const fields = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as LifecycleEventInput;
  return { event: { ...fields, id, at }, sortId: `${at}#${sequence}#${id}` };
}

/** Events written inside a caller's transaction; `publish` queues their webhooks once it has committed. */
export function lifecycleEventItems(userId: string, inputs: LifecycleEventInput[], now = new Date()): { items: TransactItem[]; publish: () => Promise<void> } {
  const built = inputs.map((input, i) => build(input, now, i));
  const expiresAt = Math.floor(now.getTime() / 1000) + EVENT_TTL_SECONDS;
  return {
    items: built.map(({ event, sortId }) => tx.put({ ...keys.lifecycleEvent(userId, sortId), ...event, expiresAt })),
    publish: () =>
      publish(
        userId,
        built.map((b) => b.event),
      ),
  };
}

async function publish(userId: string, events: LifecycleEvent[]): Promise<void> {
  for (const { id, at, type, ...data } of events) await emitAccountEvent(userId, { id, type, timestamp: at, data: { userId, ...data } });
}

/** Stores one event on its own (no state change goes with it) and queues its webhook. */
export async function recordLifecycleEvent(userId: string, input: LifecycleEventInput, now = new Date()): Promise<LifecycleEvent> {
  const { event, sortId } = build(input, now);
  await tenant(userId).put({ ...keys.lifecycleEvent(userId, sortId), ...event, expiresAt: Math.floor(now.getTime() / 1000) + EVENT_TTL_SECONDS });
  await publish(userId, [event]);
  return event;
}

/** One page of the account's events, oldest first, with the cursor of the next page (null on the last). */
export async function listLifecycleEvents(userId: string, limit: number, cursor?: string): Promise<{ events: LifecycleEvent[]; cursor: string | null }> {
  const page = await tenant(userId).query<StoredEvent>(keys.lifecycleEventPrefix, { limit, cursor });
  const events = page.items.map(({ pk: _pk, sk: _sk, expiresAt: _ttl, ...event }) => event as LifecycleEvent);
  return { events, cursor: page.cursor ?? null };
}
