import type { EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from './tenant';

/**
 * What `POST /api/provision` stored for an agent provisioned with channels, at
 * `USER#<id> / CHANNELS#<agentId>`: its AI provider choice, its sealed channel tokens (channel
 * skills read them, data/skills/channels.ts) and its live stream (the DJ skill uses it,
 * data/skills/dj-sets.ts). It goes with the agent (data/agents.ts, deleteAgentOwnedItems).
 */
export interface ProvisionedStream {
  provider: string;
  liveStreamId: string;
  streamKey: EnvelopeRecord;
  rtmpServer: string;
  playbackUrl: string;
  hlsPlaylistUrl: string;
  lowLatency: boolean;
  resolution: string;
  bitrate: string;
  keyRotatedAt?: string;
}

export interface ChannelProvision extends Record<string, unknown> {
  agentId: string;
  streaming: ProvisionedStream;
  createdAt: string;
}

/** The write of a new record, committed in the transaction that creates the agent. */
export const channelProvisionItem = (userId: string, record: { agentId: string } & Record<string, unknown>): TransactItem =>
  tx.put({ ...keys.channelProvision(userId, record.agentId), ...record });

export const getChannelProvision = (userId: string, agentId: string) => tenant(userId).get<ChannelProvision>(keys.channelProvision(userId, agentId), true);

/**
 * Stores a rotated stream key, only if the record still holds the stream `liveStreamId` names.
 * Returns the record after the change, or undefined when it is gone (its agent was deleted) or
 * holds another stream.
 */
export async function storeRotatedStreamKey(
  userId: string,
  agentId: string,
  liveStreamId: string,
  sealedKey: EnvelopeRecord,
  now = new Date(),
): Promise<ChannelProvision | undefined> {
  try {
    return await tenant(userId).update<ChannelProvision>(
      keys.channelProvision(userId, agentId),
      { expression: 'SET streaming.streamKey = :key, streaming.keyRotatedAt = :at', values: { ':key': sealedKey, ':at': now.toISOString() } },
      { expression: 'streaming.liveStreamId = :stream', values: { ':stream': liveStreamId } },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}
