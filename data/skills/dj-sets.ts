import * as keys from '../keys';
import { ConditionFailedError, tenant, transact, tx } from '../tenant';
import { DomainError } from '#platform/errors';

/**
 * dj-streaming state of one agent at `USER#<id> / DJSET#<agentId>`: `idle` or `live` with the set
 * in progress, plus the agent's own stream when it was not channel-provisioned. Starting a set
 * counts one stream in the month's `STREAMS#<yyyy-mm>` record (read by the metrics summary) in the
 * same transaction; stopping writes the finished set to `DJSETLOG#<agentId>#<startedAt>`.
 * Both are state transitions settled by condition expressions, so two starts cannot both win.
 */
export interface AgentStream {
  provider: string;
  liveStreamId: string;
  rtmpServer: string;
  playbackUrl: string;
  hlsPlaylistUrl: string;
  /** Envelope-encrypted stream key (purpose `stream-key`), as /api/provision stores it. */
  streamKey: Record<string, unknown>;
}

export interface LiveSet {
  setId: string;
  title?: string;
  genre?: string;
  startedAt: string;
}

export interface DjSetState extends Record<string, unknown> {
  agentId: string;
  status: 'idle' | 'live';
  live?: LiveSet;
  stream?: AgentStream;
  lastEndedAt?: string;
}

export interface FinishedSet extends LiveSet, Record<string, unknown> {
  agentId: string;
  liveStreamId: string;
  endedAt: string;
  durationSeconds: number;
}

/** A set started while one is live, or stopped while none is. */
export class SetStateError extends DomainError {
  constructor(message: string, code: 'ALREADY_LIVE' | 'NOT_LIVE') {
    super('conflict', message, code);
  }
}

export const getDjSet = (userId: string, agentId: string) => tenant(userId).get<DjSetState>(keys.djSet(userId, agentId), true);

/** The stream the agent was provisioned with through /api/provision, if any. */
export async function provisionedStream(userId: string, agentId: string): Promise<AgentStream | undefined> {
  const record = await tenant(userId).get<{ streaming?: AgentStream }>(keys.channelProvision(userId, agentId), true);
  return record?.streaming;
}

export async function startSet(userId: string, agentId: string, set: LiveSet, month: string, newStream?: AgentStream): Promise<void> {
  const values: Record<string, unknown> = { ':live': 'live', ':set': set, ':agentId': agentId, ...(newStream ? { ':stream': newStream } : {}) };
  const expression = `SET #status = :live, #live = :set, agentId = :agentId${newStream ? ', #stream = :stream' : ''}`;
  try {
    await transact([
      tx.update(
        keys.djSet(userId, agentId),
        { expression, names: { '#status': 'status', '#live': 'live', ...(newStream ? { '#stream': 'stream' } : {}) }, values },
        { expression: 'attribute_not_exists(#status) OR #status <> :live' },
      ),
      tx.update(keys.streamsMonth(userId, month), { expression: 'ADD streams :one', values: { ':one': 1 } }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new SetStateError('a set is already live on this stream', 'ALREADY_LIVE');
    throw err;
  }
}

export async function stopSet(userId: string, finished: FinishedSet): Promise<void> {
  try {
    await transact([
      tx.update(
        keys.djSet(userId, finished.agentId),
        {
          expression: 'SET #status = :idle, lastEndedAt = :endedAt REMOVE #live',
          names: { '#status': 'status', '#live': 'live' },
          values: { ':idle': 'idle', ':endedAt': finished.endedAt },
        },
        { expression: '#status = :live AND #live.setId = :setId', values: { ':live': 'live', ':setId': finished.setId } },
      ),
      tx.put({ ...keys.djSetLog(userId, finished.agentId, finished.startedAt), ...finished }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new SetStateError('no set is live on this stream', 'NOT_LIVE');
    throw err;
  }
}

export const finishedSets = (userId: string, agentId: string) => tenant(userId).queryAll<FinishedSet>(keys.djSetLogPrefix(agentId), { consistent: true });
