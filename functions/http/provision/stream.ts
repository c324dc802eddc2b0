import { StreamingError, streaming } from '#adapters/streaming';
import type { AuthContext } from '#domain/auth/authenticate';
import { decrypt, encrypt } from '#platform/crypto/envelope';
import { type ChannelProvision, getChannelProvision, storeRotatedStreamKey } from '#data/channel-provisions';
import { notFound, upstreamFailed } from '#platform/errors';

const STREAM_KEY_PURPOSE = 'stream-key';
const noStream = () => notFound('no channel-provisioned agent with a live stream has this id');

async function ownStream(userId: string, agentId: string): Promise<ChannelProvision> {
  const record = await getChannelProvision(userId, agentId);
  if (!record?.streaming) throw noStream();
  return record;
}

function view(record: ChannelProvision, streamKey: string) {
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
      throw upstreamFailed('the streaming provider could not issue a new key; the old one still works', 'STREAMING_UNAVAILABLE');
    throw err;
  }
  const sealed = await encrypt(streamKey, { userId: auth.userId, purpose: STREAM_KEY_PURPOSE });
  const updated = await storeRotatedStreamKey(auth.userId, agentId, record.streaming.liveStreamId, sealed);
  if (!updated) throw noStream();
  return view(updated, streamKey);
}
