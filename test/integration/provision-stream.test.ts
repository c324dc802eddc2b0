import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { decrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser } from '#data/users';
import { call, testSession, uniqueIp, storeActiveSubscription } from '../helpers/api';
import { privateQueue } from './agents-helpers';

/** The live stream of POST /api/provision read back by its owner, and its key rotated. */

const savedQueue = process.env.PROVISIONING_QUEUE_URL;
beforeAll(async () => reloadConfig({ PROVISIONING_QUEUE_URL: await privateQueue() }));
afterAll(() => reloadConfig({ PROVISIONING_QUEUE_URL: savedQueue }));

async function provisionedWithChannels() {
  const email = `dj-${randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser({ email, name: 'DJ Nova' });
  const subscriptionId = await storeActiveSubscription(user.userId);
  const session = await testSession({ userId: user.userId, email });
  const res = await call('POST', '/api/provision', {
    body: { chatBotToken: '7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6a', plan: 'solo', cardSubscriptionId: subscriptionId },
    session,
    ip: uniqueIp(),
  });
  expect(res.status).toBe(200);
  const [agent] = await tenant(user.userId).queryAll<{ id: string }>(keys.agentPrefix);
  return { userId: user.userId, session, first: res.body as { streamKey: string; liveStreamId: string }, agentId: agent!.id };
}

describe('the provisioned live stream', () => {
  it('the owner reads back the RTMP server, key, playback and HLS URLs given at provisioning', async () => {
    const { session, first, agentId } = await provisionedWithChannels();
    const res = await call('GET', `/api/provision/${agentId}/stream`, { session });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      agentId,
      liveStreamId: first.liveStreamId,
      streamKey: first.streamKey,
      rtmp: { key: first.streamKey },
      keyRotatedAt: null,
    });
    expect(res.body.rtmp.server).toBe(res.body.rtmpServer);
    expect(res.body.hls.playlistUrl).toContain(first.liveStreamId);
    expect(res.body.playbackUrl).toMatch(/^https?:\/\//);
  });

  it('rotating the key gives a new one, stored encrypted, read back from then on; the stream stays the same', async () => {
    const { userId, session, first, agentId } = await provisionedWithChannels();
    const rotated = await call('POST', `/api/provision/${agentId}/stream/rotate`, { session });
    expect(rotated.status).toBe(200);
    expect(rotated.body.streamKey).not.toBe(first.streamKey);
    expect(rotated.body.liveStreamId).toBe(first.liveStreamId);
    expect(rotated.body.keyRotatedAt).not.toBeNull();
    const read = await call('GET', `/api/provision/${agentId}/stream`, { session });
    expect(read.body.streamKey).toBe(rotated.body.streamKey);
    const stored = await tenant(userId).get<{ streaming: { streamKey: EnvelopeRecord } }>(keys.channelProvision(userId, agentId));
    expect(JSON.stringify(stored)).not.toContain(rotated.body.streamKey);
    expect((await decrypt(stored!.streaming.streamKey, { userId, purpose: 'stream-key' })).toString()).toBe(rotated.body.streamKey);
  });

  it('another account gets 404 and learns nothing; an agent without channels has no stream', async () => {
    const { session, agentId, first } = await provisionedWithChannels();
    const intruder = await provisionedWithChannels();
    for (const [method, path] of [
      ['GET', `/api/provision/${agentId}/stream`],
      ['POST', `/api/provision/${agentId}/stream/rotate`],
    ] as const) {
      const res = await call(method, path, { session: intruder.session });
      expect(res.status).toBe(404);
      expect(res.text).not.toContain(first.streamKey);
    }
    expect((await call('GET', `/api/provision/${agentId}/stream`, { session })).body.streamKey).toBe(first.streamKey);
    expect((await call('GET', '/api/provision/agt_nochannels/stream', { session })).status).toBe(404);
    expect((await call('GET', `/api/provision/${agentId}/stream`)).status).toBe(401);
  });
});
