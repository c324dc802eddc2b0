import { StreamingError, streaming } from '#adapters/streaming';
import type { AuthContext } from '#domain/auth/authenticate';
import { decrypt, type EnvelopeRecord, encrypt } from '#platform/crypto/envelope';
import * as keys from '#data/keys';
import { ConditionFailedError, tenant } from '#data/tenant';
import { HttpError, notFound } from '#http/errors';

/** The stream part of a channel provisioning record (functions/http/provision/channels.ts writes it). */
interface StoredStream {
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

interface ChannelRecord extends Record<string, unknown> {
  agentId: string;
  streaming: StoredStream;
  createdAt: string;
}

const STREAM_KEY_PURPOSE = 'stream-key';
const noStream = () => notFound('no channel-provisioned agent with a live stream has this id');

async function ownStream(userId: string, agentId: string): Promise<ChannelRecord> {
  const record = await tenant(userId).get<ChannelRecord>(keys.channelProvision(userId, agentId), true);
  if (!record?.streaming) throw noStream();
  return record;
}

function view(record: ChannelRecord, streamKey: string) {
  const s = record.streaming;
  return {
    agentId: record.agentId,
    provider: s.provider,
    liveStreamId: s.liveStreamId,
    rtmpServer: s.rtmpServer,
    streamKey,
    rtmp: { server: s.rtmpServer, key: streamKey },
    playbackUrl: s.playbackUrl,
    hls: { playlistUrl: s.hlsPlaylistUrl },
    lowLatency: s.lowLatency,
    resolution: s.resolution,
    bitrate: s.bitrate,
    createdAt: record.createdAt,
    keyRotatedAt: s.keyRotatedAt ?? null,
  };
}

/** `GET /api/provision/{id}/stream`: the owner's stream with its key decrypted. */
export async function readStream(auth: AuthContext, agentId: string) {
  const record = await ownStream(auth.userId, agentId);
  const key = await decrypt(record.streaming.streamKey, { userId: auth.userId, purpose: STREAM_KEY_PURPOSE });
  return view(record, key.toString('utf8'));
}

/**
 * `POST /api/provision/{id}/stream/rotate`: the provider issues the new key first; it is stored
 * only if the record still holds the same stream (an agent deleted meanwhile answers 404).
 */
export async function rotateStreamKey(auth: AuthContext, agentId: string) {
  const record = await ownStream(auth.userId, agentId);
  let streamKey: string;
  try {
    ({ streamKey } = await streaming().rotateStreamKey({ userId: auth.userId, agentId, liveStreamId: record.streaming.liveStreamId }));
  } catch (err) {
    if (err instanceof StreamingError)
      throw new HttpError(502, 'the streaming provider could not issue a new key; the old one still works', 'STREAMING_UNAVAILABLE');
    throw err;
  }
  const sealed = await encrypt(streamKey, { userId: auth.userId, purpose: STREAM_KEY_PURPOSE });
  const at = new Date().toISOString();
  let updated: ChannelRecord;
  try {
    updated = await tenant(auth.userId).update<ChannelRecord>(
      keys.channelProvision(auth.userId, agentId),
      { expression: 'SET streaming.streamKey = :key, streaming.keyRotatedAt = :at', values: { ':key': sealed, ':at': at } },
      { expression: 'streaming.liveStreamId = :stream', values: { ':stream': record.streaming.liveStreamId } },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) throw noStream();
    throw err;
  }
  return view(updated, streamKey);
}
