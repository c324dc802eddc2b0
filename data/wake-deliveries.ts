import { randomBytes } from 'node:crypto';
import { dueInIndex } from './due-index';
import { dueShardOf, HEARTBEAT_DUE_SHARDS } from './heartbeat';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Messages kept while their instance wakes: a chat or channel message whose
 * caller stopped waiting (202) is stored here before the answer goes out, and sits in gsi1 under
 * `WAKEDUE#<shard>` until it is delivered. Whoever sees the instance running first (the launch
 * settling, the minute sweep) claims it with a conditional write carrying a lease, so one deliverer
 * at a time sends it; a deliverer that dies leaves the lease to run out and the next sweep takes it
 * again, so nothing is lost across a worker restart.
 */

export const WAKE_DELIVERY_SHARDS = HEARTBEAT_DUE_SHARDS;
/** Kept a week after it was settled: the caller of a 202 reads its outcome in the history and events. */
const DELIVERY_TTL_SECONDS = 7 * 24 * 3600;

export type WakeDeliverySource = 'chat' | 'agent-chat' | 'channel';

export interface WakeDeliveryInput {
  agentId: string;
  message: string;
  source: WakeDeliverySource;
  /** The wake's operation, answered with the 202. */
  operationId: string;
  /** `POST /api/agent`: the session the exchange is added to. */
  sessionId?: string;
  thread?: { role: 'user' | 'assistant'; content: string }[];
  /** Inbound channel message: where the reply goes. */
  channel?: { app: string; conversation: string };
}

export interface WakeDelivery extends WakeDeliveryInput, Record<string, unknown> {
  userId: string;
  deliveryId: string;
  status: 'pending' | 'delivered' | 'failed';
  createdAt: string;
  attempts: number;
  claimedUntil?: string;
  answer?: string;
  reason?: string;
  settledAt?: string;
}

const due = (userId: string, at: Date) => ({ gsi1pk: keys.wakeDeliveryDuePartition(dueShardOf(userId)), gsi1sk: at.toISOString() });

export async function keepForDelivery(userId: string, input: WakeDeliveryInput, now = new Date()): Promise<WakeDelivery> {
  const deliveryId = `wdl_${randomBytes(12).toString('hex')}`;
  const item: WakeDelivery = {
    ...input,
    userId,
    deliveryId,
    status: 'pending',
    createdAt: now.toISOString(),
    attempts: 0,
  };
  await tenant(userId).put({ ...keys.wakeDelivery(userId, deliveryId), ...item, ...due(userId, now) }, { expression: 'attribute_not_exists(pk)' });
  return item;
}

export async function getWakeDelivery(userId: string, deliveryId: string): Promise<WakeDelivery | undefined> {
  return tenant(userId).get<WakeDelivery>(keys.wakeDelivery(userId, deliveryId), true);
}

export async function dueWakeDeliveries(shard: number, now: Date, limit: number): Promise<WakeDelivery[]> {
  return dueInIndex<WakeDelivery>(keys.wakeDeliveryDuePartition(shard), now, limit);
}

/** The account's messages still waiting for delivery (the launch that settled delivers them). */
export async function pendingWakeDeliveries(userId: string): Promise<WakeDelivery[]> {
  const kept = await tenant(userId).queryAll<WakeDelivery>(keys.wakeDelivery(userId, '').sk, { consistent: true });
  return kept.filter((d) => d.status === 'pending');
}

/** True for the one caller that may deliver it now: pending, and no other deliverer's lease running. */
export async function claimWakeDelivery(userId: string, deliveryId: string, leaseUntil: Date, now = new Date()): Promise<WakeDelivery | undefined> {
  try {
    return await tenant(userId).update<WakeDelivery>(
      keys.wakeDelivery(userId, deliveryId),
      { expression: 'SET claimedUntil = :lease, attempts = attempts + :one', values: { ':lease': leaseUntil.toISOString(), ':one': 1 } },
      {
        expression: '#status = :pending AND (attribute_not_exists(claimedUntil) OR claimedUntil < :now)',
        names: { '#status': 'status' },
        values: { ':pending': 'pending', ':now': now.toISOString() },
      },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/** Gives a claimed message back (its instance stopped meanwhile): the next deliverer takes it at once. */
export async function releaseWakeDelivery(userId: string, deliveryId: string): Promise<void> {
  await tenant(userId).update(
    keys.wakeDelivery(userId, deliveryId),
    { expression: 'REMOVE claimedUntil' },
    { expression: '#status = :pending', names: { '#status': 'status' }, values: { ':pending': 'pending' } },
  );
}

/** Delivered (with the answer) or failed (with why): out of the due index, kept a week. */
export async function settleWakeDelivery(
  userId: string,
  deliveryId: string,
  outcome: { status: 'delivered'; answer: string } | { status: 'failed'; reason: string },
  now = new Date(),
): Promise<void> {
  const detail = outcome.status === 'delivered' ? { field: 'answer', value: outcome.answer } : { field: 'reason', value: outcome.reason };
  await tenant(userId).update(keys.wakeDelivery(userId, deliveryId), {
    expression: `SET #status = :status, settledAt = :now, expiresAt = :expires, #detail = :detail REMOVE gsi1pk, gsi1sk, claimedUntil`,
    names: { '#status': 'status', '#detail': detail.field },
    values: {
      ':status': outcome.status,
      ':now': now.toISOString(),
      ':expires': Math.floor(now.getTime() / 1000) + DELIVERY_TTL_SECONDS,
      ':detail': detail.value,
    },
  });
}
