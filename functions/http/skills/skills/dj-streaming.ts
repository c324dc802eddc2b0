import { randomBytes } from 'node:crypto';
import { streaming } from '#adapters/streaming';
import { djStreamingBodies as bodies } from '#contract/skill-actions/dj-streaming';
import { encrypt } from '#platform/crypto/envelope';
import { getAgent } from '#data/agents';
import { finishedSets, getDjSet, provisionedStream, startSet, stopSet, type AgentStream, type DjSetState } from '#data/skills/dj-sets';
import { conflict, invalid, notFound } from '#platform/errors';
import { action, type SkillCall, type SkillModule } from '#domain/skills/skill-module';

/**
 * Live DJ sets on an agent's stream. The stream is the one /api/provision created for the agent;
 * an agent provisioned without channels gets one from the same streaming adapter on its first set
 * (its key is returned that once and stored encrypted, as /api/provision does). Each set started
 * counts one stream in the month's figures; listener counts are not counted, because the streaming
 * adapter reports none.
 */

/** The agent the call is about: the calling agent itself, else the body's; it must be the caller's. */
async function ownedAgent(call: SkillCall, bodyAgentId: string | undefined): Promise<string> {
  if (call.agentId && bodyAgentId && bodyAgentId !== call.agentId) throw notFound('agent not found');
  const agentId = call.agentId ?? bodyAgentId;
  if (!agentId) throw invalid('agentId is required', 'AGENT_REQUIRED');
  if (!(await getAgent(call.userId, agentId))) throw notFound('agent not found');
  return agentId;
}

const streamView = (s: AgentStream | undefined) =>
  s ? { provider: s.provider, liveStreamId: s.liveStreamId, rtmpServer: s.rtmpServer, playbackUrl: s.playbackUrl, hlsPlaylistUrl: s.hlsPlaylistUrl } : null;

const stateView = (agentId: string, state: DjSetState | undefined, stream: AgentStream | undefined) => ({
  agentId,
  status: state?.status ?? 'idle',
  set: state?.live ? { setId: state.live.setId, title: state.live.title ?? null, genre: state.live.genre ?? null, startedAt: state.live.startedAt } : null,
  lastEndedAt: state?.lastEndedAt ?? null,
  stream: streamView(stream),
});

export const skill: SkillModule = {
  name: 'dj-streaming',
  actions: {
    start_stream: action(bodies().start_stream, async (call, body) => {
      const agentId = await ownedAgent(call, body.agentId);
      const [state, provisioned] = await Promise.all([getDjSet(call.userId, agentId), provisionedStream(call.userId, agentId)]);
      if (state?.status === 'live') throw conflict('a set is already live on this stream', 'ALREADY_LIVE');
      let stream = provisioned ?? state?.stream;
      let newStream: AgentStream | undefined;
      let streamKey: string | undefined;
      if (!stream) {
        const created = await streaming().createLiveStream({ userId: call.userId, agentId });
        streamKey = created.streamKey;
        newStream = {
          provider: created.provider,
          liveStreamId: created.liveStreamId,
          rtmpServer: created.rtmpServer,
          playbackUrl: created.playbackUrl,
          hlsPlaylistUrl: created.hlsPlaylistUrl,
          streamKey: await encrypt(created.streamKey, { userId: call.userId, purpose: 'stream-key' }),
        };
        stream = newStream;
      }
      const set = { setId: `set_${randomBytes(12).toString('hex')}`, title: body.title, genre: body.genre, startedAt: call.now.toISOString() };
      await startSet(call.userId, agentId, set, call.now.toISOString().slice(0, 7), newStream);
      return {
        ...stateView(agentId, { agentId, status: 'live', live: set }, stream),
        ...(streamKey ? { streamKey, streamKeyNotice: 'shown once: store it in your broadcasting software' } : {}),
      };
    }),
    stop_stream: action(bodies().stop_stream, async (call, body) => {
      const agentId = await ownedAgent(call, body.agentId);
      const state = await getDjSet(call.userId, agentId);
      const live = state?.status === 'live' ? state.live : undefined;
      if (!live) throw conflict('no set is live on this stream', 'NOT_LIVE');
      const stream = (await provisionedStream(call.userId, agentId)) ?? state?.stream;
      const endedAt = call.now.toISOString();
      const durationSeconds = Math.max(0, Math.round((call.now.getTime() - Date.parse(live.startedAt)) / 1000));
      await stopSet(call.userId, { ...live, agentId, liveStreamId: stream?.liveStreamId ?? '', endedAt, durationSeconds });
      return {
        agentId,
        status: 'idle',
        set: { setId: live.setId, title: live.title ?? null, genre: live.genre ?? null, startedAt: live.startedAt, endedAt, durationSeconds },
      };
    }),
    status: action(bodies().status, async (call, body) => {
      const agentId = await ownedAgent(call, body.agentId);
      const [state, provisioned] = await Promise.all([getDjSet(call.userId, agentId), provisionedStream(call.userId, agentId)]);
      return stateView(agentId, state, provisioned ?? state?.stream);
    }),
    list_sets: action(bodies().list_sets, async (call, body) => {
      const agentId = await ownedAgent(call, body.agentId);
      const sets = (await finishedSets(call.userId, agentId)).reverse();
      return {
        agentId,
        sets: sets.map((s) => ({
          setId: s.setId,
          title: s.title ?? null,
          genre: s.genre ?? null,
          startedAt: s.startedAt,
          endedAt: s.endedAt,
          durationSeconds: s.durationSeconds,
        })),
        count: sets.length,
      };
    }),
  },
};
