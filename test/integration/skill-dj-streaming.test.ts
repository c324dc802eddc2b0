import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/dj-streaming';
import * as keys from '#data/keys';
import { readSummaryRecords } from '#data/metrics';
import { tenant } from '#data/tenant';
import { newTestUserId, runSkill } from '../helpers/skill-call';
import { putTestAgent } from '../security/route-samples';

const NOW = new Date('2026-06-20T21:00:00Z');
const later = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);

async function ownerWithAgent() {
  const userId = newTestUserId();
  return { userId, agentId: await putTestAgent(userId) };
}

const streamsThisMonth = async (userId: string) => (await readSummaryRecords(userId)).streams.find((s) => s.month === '2026-06')?.streams ?? 0;

describe('dj-streaming', () => {
  it('starts and stops live sets on the agent stream, stores the state and counts streams per month', async () => {
    const { userId, agentId } = await ownerWithAgent();
    const start = await runSkill(skill, userId, { action: 'start_stream', agentId, title: 'Friday house', genre: 'house' }, { now: NOW });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({
      agentId,
      status: 'live',
      set: { title: 'Friday house', genre: 'house', startedAt: NOW.toISOString() },
      stream: { provider: 'local' },
    });
    expect(start.body.streamKey).toMatch(/^live_/);
    const stream = start.body.stream;
    // The key is stored sealed, never in the clear.
    expect(JSON.stringify(await tenant(userId).get(keys.djSet(userId, agentId)))).not.toContain(start.body.streamKey);

    expect(await runSkill(skill, userId, { action: 'start_stream', agentId }, { now: later(1) })).toMatchObject({
      status: 409,
      body: { code: 'ALREADY_LIVE' },
    });
    expect((await runSkill(skill, userId, { action: 'status', agentId })).body).toMatchObject({ status: 'live', set: { setId: start.body.set.setId } });

    const stop = await runSkill(skill, userId, { action: 'stop_stream', agentId }, { now: later(95) });
    expect(stop.body).toMatchObject({ status: 'idle', set: { setId: start.body.set.setId, durationSeconds: 95 * 60, endedAt: later(95).toISOString() } });
    expect(await runSkill(skill, userId, { action: 'stop_stream', agentId }, { now: later(96) })).toMatchObject({ status: 409, body: { code: 'NOT_LIVE' } });

    const again = await runSkill(skill, userId, { action: 'start_stream', agentId }, { now: later(120) });
    expect(again.body.stream).toEqual(stream);
    expect(again.body.streamKey).toBeUndefined();
    await runSkill(skill, userId, { action: 'stop_stream', agentId }, { now: later(150) });

    const sets = await runSkill(skill, userId, { action: 'list_sets', agentId });
    expect(sets.body.sets.map((s: any) => s.durationSeconds)).toEqual([30 * 60, 95 * 60]);
    expect(await streamsThisMonth(userId)).toBe(2);
  });

  it('uses the stream /api/provision gave the agent, and a runtime call needs no agentId', async () => {
    const { userId, agentId } = await ownerWithAgent();
    await tenant(userId).put({
      ...keys.channelProvision(userId, agentId),
      agentId,
      streaming: {
        provider: 'local',
        liveStreamId: 'ls_provisioned',
        rtmpServer: 'rtmp://127.0.0.1:1935/live',
        playbackUrl: 'http://127.0.0.1:3000/live/ls_provisioned/index.m3u8',
        hlsPlaylistUrl: 'http://127.0.0.1:3000/live/ls_provisioned/index.m3u8',
        streamKey: {},
      },
    });
    const start = await runSkill(skill, userId, { action: 'start_stream' }, { agentId, now: NOW });
    expect(start.body.stream.liveStreamId).toBe('ls_provisioned');
    expect(start.body.streamKey).toBeUndefined();
    const other = await putTestAgent(userId);
    expect((await runSkill(skill, userId, { action: 'status', agentId: other }, { agentId })).status).toBe(404);
  });

  it('five simultaneous starts: exactly one goes live and one stream is counted', async () => {
    const { userId, agentId } = await ownerWithAgent();
    const results = await Promise.all(Array.from({ length: 5 }, () => runSkill(skill, userId, { action: 'start_stream', agentId }, { now: NOW })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
    expect(await streamsThisMonth(userId)).toBe(1);
  });

  it("an empty account is idle with no sets; another user's agent is 404", async () => {
    const { userId, agentId } = await ownerWithAgent();
    expect((await runSkill(skill, userId, { action: 'status', agentId })).body).toEqual({
      success: true,
      agentId,
      status: 'idle',
      set: null,
      lastEndedAt: null,
      stream: null,
    });
    expect((await runSkill(skill, userId, { action: 'list_sets', agentId })).body).toEqual({ success: true, agentId, sets: [], count: 0 });
    expect(await streamsThisMonth(userId)).toBe(0);
    const intruder = newTestUserId();
    for (const act of ['start_stream', 'stop_stream', 'status', 'list_sets'])
      expect((await runSkill(skill, intruder, { action: act, agentId })).status).toBe(404);
    expect((await runSkill(skill, userId, { action: 'status', agentId })).body.status).toBe('idle');
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const { userId, agentId } = await ownerWithAgent();
    const bad = [
      { action: 'start_stream', agentId, title: '' },
      { action: 'start_stream', agentId, streamKey: 'mine' },
      { action: 'stop_stream', agentId: 'USER#x' },
      { action: 'status', agentId: 42 },
      { action: 'list_sets', agentId, limit: 5 },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    expect(await runSkill(skill, userId, { action: 'status' })).toMatchObject({ status: 400, body: { code: 'AGENT_REQUIRED' } });
  });
});
