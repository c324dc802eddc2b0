import { randomBytes } from 'node:crypto';
import { streamingConfig } from '#platform/config';

/**
 * Live streams of channel-provisioned agents (spec 4.5): an ingest (RTMP server + secret stream
 * key) and a playback URL (HLS). One interface; the `local` provider, the default, generates the
 * ids and keys here with crypto and makes no outside call. The caller stores what it gets.
 */

export interface LiveStream {
  provider: string;
  liveStreamId: string;
  /** Secret: whoever holds it can publish to the stream. */
  streamKey: string;
  rtmpServer: string;
  playbackUrl: string;
  hlsPlaylistUrl: string;
  lowLatency: boolean;
  resolution: string;
  bitrate: string;
}

export interface StreamingProvider {
  createLiveStream(input: { userId: string; agentId: string }): Promise<LiveStream>;
  /** A new publishing key for an existing stream; the old one stops working. Throws StreamingError when the provider fails. */
  rotateStreamKey(input: { userId: string; agentId: string; liveStreamId: string }): Promise<{ streamKey: string }>;
}

export class StreamingError extends Error {}

const newStreamKey = () => `live_${randomBytes(24).toString('base64url')}`;

const localProvider: StreamingProvider = {
  async createLiveStream() {
    const { rtmpUrl, playbackBaseUrl } = streamingConfig();
    const liveStreamId = `ls_${randomBytes(12).toString('hex')}`;
    const playlist = `${playbackBaseUrl.replace(/\/+$/, '')}/${liveStreamId}/index.m3u8`;
    return {
      provider: 'local',
      liveStreamId,
      streamKey: newStreamKey(),
      rtmpServer: rtmpUrl,
      playbackUrl: playlist,
      hlsPlaylistUrl: playlist,
      lowLatency: true,
      resolution: '1080p',
      bitrate: '6000kbps',
    };
  },
  // The local provider runs no ingest server: the stored key is the only copy, so replacing it is the rotation.
  async rotateStreamKey() {
    return { streamKey: newStreamKey() };
  },
};

export function streaming(): StreamingProvider {
  switch (streamingConfig().provider) {
    case 'local':
      return localProvider;
  }
}
