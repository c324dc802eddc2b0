import type { ChannelApp } from '#adapters/channels';
import { appendSessionMessages } from '#data/chat-sessions';
import { getInstance } from '#data/instances';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import { getConnection, recordMessage } from '#data/skills/channels';
import {
  claimWakeDelivery,
  dueWakeDeliveries,
  pendingWakeDeliveries,
  releaseWakeDelivery,
  settleWakeDelivery,
  WAKE_DELIVERY_SHARDS,
  type WakeDelivery,
} from '#data/wake-deliveries';
import { logger } from '#platform/logger';
import { sendAgentReply } from './channel-inbound';
import { AgentExchangeError, exchangeWith } from './chat';

/**
 * Delivers the messages kept while their instance woke (data/wake-deliveries.ts): called by
 * the provisioner once a launch settles `running` and by the minute sweep, whichever comes first.
 * Each message is claimed by a conditional write first, so two deliverers never send one twice;
 * the answer lands in the agent's history (and the session or channel it came from) and an
 * `agent.delivered` event carries it. The one window for a second delivery is a deliverer that dies
 * after the agent answered and before the settle write: its lease runs out and the message goes again.
 */

/** Longer than one answer may take (the model's timeout and the runtime's margin). */
const DELIVERY_LEASE_MS = 3 * 60_000;
/** A message whose instance never ran within a day is given up, with the reason. */
const GIVE_UP_AFTER_MS = 24 * 3600_000;
const PER_SHARD = 50;

export interface WakeDeliveryResult {
  delivered: number;
  failed: number;
  waiting: number;
}

type Outcome = 'delivered' | 'failed' | 'waiting';

async function deliverToChannel(d: WakeDelivery, answer: string) {
  if (!d.channel) return;
  const app = d.channel.app as ChannelApp;
  const connection = await getConnection(d.userId, app);
  if (!connection) return;
  const sent = await sendAgentReply(app, d.userId, connection, { conversation: d.channel.conversation, externalId: d.deliveryId }, answer, true);
  if (sent) await recordMessage(d.userId, sent);
}

async function deliverOne(d: WakeDelivery, now: Date): Promise<Outcome> {
  const instance = await getInstance(d.userId, true);
  if (instance?.status !== 'running') {
    if (now.getTime() - Date.parse(d.createdAt) < GIVE_UP_AFTER_MS) return 'waiting';
    await settleWakeDelivery(d.userId, d.deliveryId, { status: 'failed', reason: `the instance did not run within a day (${instance?.status ?? 'none'})` });
    return 'failed';
  }
  const claimed = await claimWakeDelivery(d.userId, d.deliveryId, new Date(now.getTime() + DELIVERY_LEASE_MS), now);
  if (!claimed) return 'waiting';
  let exchange: Awaited<ReturnType<typeof exchangeWith>>;
  try {
    exchange = await exchangeWith(d.userId, d.agentId, d.message, d.thread);
  } catch (err) {
    if (!(err instanceof AgentExchangeError)) throw err;
    // Stopped again before the message went: it stays for the next run.
    if (err.code === 'AGENT_NOT_RUNNING') {
      await releaseWakeDelivery(d.userId, d.deliveryId);
      return 'waiting';
    }
    await settleWakeDelivery(d.userId, d.deliveryId, { status: 'failed', reason: err.code ?? 'AGENT_ERROR' });
    await recordLifecycleEvent(d.userId, {
      type: 'agent.delivered',
      cause: 'wake',
      agentId: d.agentId,
      status: 'failed',
      reason: err.code,
      details: { deliveryId: d.deliveryId, operationId: d.operationId, source: d.source },
    });
    return 'failed';
  }
  if (d.sessionId) await appendSessionMessages(d.userId, d.sessionId, [exchange.message, exchange.reply]);
  if (d.source === 'channel') await deliverToChannel(d, exchange.reply.content);
  await settleWakeDelivery(d.userId, d.deliveryId, { status: 'delivered', answer: exchange.reply.content });
  await recordLifecycleEvent(d.userId, {
    type: 'agent.delivered',
    cause: 'wake',
    agentId: d.agentId,
    status: 'delivered',
    details: {
      deliveryId: d.deliveryId,
      operationId: d.operationId,
      source: d.source,
      messageId: exchange.message.id,
      replyId: exchange.reply.id,
      reply: exchange.reply.content,
      ...(d.sessionId ? { sessionId: d.sessionId } : {}),
    },
  });
  return 'delivered';
}

async function deliverAll(kept: WakeDelivery[], now: Date): Promise<WakeDeliveryResult> {
  const result: WakeDeliveryResult = { delivered: 0, failed: 0, waiting: 0 };
  // One at a time per account: the runtime answers an agent's messages in the order they came.
  const byAccount = new Map<string, WakeDelivery[]>();
  for (const d of kept) byAccount.set(d.userId, [...(byAccount.get(d.userId) ?? []), d]);
  await Promise.all(
    [...byAccount.values()].map(async (deliveries) => {
      for (const d of deliveries.sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
        try {
          result[await deliverOne(d, now)] += 1;
        } catch (err) {
          // Left claimed: the lease runs out and the next sweep takes it again.
          logger().error('a kept message could not be delivered', { userId: d.userId, deliveryId: d.deliveryId, error: (err as Error).message });
          result.waiting += 1;
        }
      }
    }),
  );
  return result;
}

/** The launch of this account settled `running`: its kept messages go now. */
export async function deliverKeptMessages(userId: string, now = new Date()): Promise<WakeDeliveryResult> {
  return deliverAll(await pendingWakeDeliveries(userId), now);
}

/** The minute sweep: every kept message whose instance runs, whatever delivered nothing so far. */
export async function deliverDueKeptMessages(now = new Date()): Promise<WakeDeliveryResult> {
  const shards = Array.from({ length: WAKE_DELIVERY_SHARDS }, (_, shard) => shard);
  const due = (await Promise.all(shards.map((shard) => dueWakeDeliveries(shard, now, PER_SHARD)))).flat();
  return deliverAll(due, now);
}
