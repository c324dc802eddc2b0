import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { frequencyMinutes, HEARTBEAT_DEFAULTS } from '#contract/heartbeat-frequency';
import { db, tableName } from './client';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Heartbeat settings (spec 2.15) at `USER#<id> / HEARTBEAT`.
 *
 * While enabled the item is in gsi1 under `HBDUE#<shard>` with `gsi1sk = nextHeartbeat`, so the
 * sweep reads only the users that are due (a range on the sort key), never a Scan; disabled items
 * carry no gsi1 keys and are not in the index at all. The shard spreads the due index over
 * HEARTBEAT_DUE_SHARDS partitions (a user always lands on the same one).
 *
 * Every write is conditional: settings changes on the `version` they were decided on, and the
 * sweep's claim on the `nextHeartbeat` it saw, so overlapping sweeps process a due user once and a
 * settings change never loses to (or overwrites) a heartbeat.
 */

export const HEARTBEAT_DUE_SHARDS = 8;

export interface HeartbeatBaseline {
  /** The account's agents' cumulative figures at the last sample: the next sample counts from them. */
  messages: number;
  errors: number;
  responseMsTotal: number;
}

export interface HeartbeatRecord extends Record<string, unknown> {
  userId: string;
  frequency: string;
  enabled: boolean;
  lastHeartbeat: string | null;
  nextHeartbeat: string | null;
  lastUpdated: string;
  version: number;
  baseline?: HeartbeatBaseline;
  gsi1pk?: string;
  gsi1sk?: string;
}

export type HeartbeatSettings = Pick<HeartbeatRecord, 'frequency' | 'enabled' | 'lastHeartbeat' | 'nextHeartbeat'>;

export const dueShardOf = (userId: string) => createHash('sha256').update(userId).digest()[0]! % HEARTBEAT_DUE_SHARDS;

const minutesOf = (frequency: string) => {
  const minutes = frequencyMinutes(frequency);
  if (minutes === undefined) throw new Error(`invalid heartbeat frequency ${frequency}`);
  return minutes;
};

export const addFrequency = (from: Date, frequency: string) => new Date(from.getTime() + minutesOf(frequency) * 60_000);

export function defaultHeartbeat(userId: string): HeartbeatSettings & { userId: string } {
  return { userId, frequency: HEARTBEAT_DEFAULTS.frequency, enabled: HEARTBEAT_DEFAULTS.enabled, lastHeartbeat: null, nextHeartbeat: null };
}

export async function getHeartbeat(userId: string, consistent = false): Promise<HeartbeatRecord | undefined> {
  return tenant(userId).get<HeartbeatRecord>(keys.heartbeat(userId), consistent);
}

export type HeartbeatChange = { frequency?: string; enabled?: boolean } | 'reset';

/**
 * The settings after a change. Switching on makes the first heartbeat due now; a new frequency
 * while on counts from the last heartbeat (due now when that is already past); switching off
 * leaves the due index.
 */
export function applyChange(current: HeartbeatSettings, change: HeartbeatChange, now: Date): HeartbeatSettings {
  const wanted = change === 'reset' ? { frequency: HEARTBEAT_DEFAULTS.frequency, enabled: HEARTBEAT_DEFAULTS.enabled } : change;
  const frequency = wanted.frequency ?? current.frequency;
  const enabled = wanted.enabled ?? current.enabled;
  let nextHeartbeat: string | null = null;
  if (enabled && !current.enabled) nextHeartbeat = now.toISOString();
  else if (enabled && frequency !== current.frequency) {
    const from = current.lastHeartbeat ? addFrequency(new Date(current.lastHeartbeat), frequency) : now;
    nextHeartbeat = new Date(Math.max(from.getTime(), now.getTime())).toISOString();
  } else if (enabled) nextHeartbeat = current.nextHeartbeat ?? now.toISOString();
  return { frequency, enabled, lastHeartbeat: current.lastHeartbeat, nextHeartbeat };
}

const dueIndexKeys = (userId: string, s: HeartbeatSettings) =>
  s.enabled && s.nextHeartbeat ? { gsi1pk: keys.heartbeatDuePartition(dueShardOf(userId)), gsi1sk: s.nextHeartbeat } : {};

const SAVE_ATTEMPTS = 10;

/** Applies a settings change against the stored version; retried when a sweep or another change lands in between. */
export async function saveHeartbeat(userId: string, change: HeartbeatChange, now = new Date()): Promise<HeartbeatRecord> {
  const store = tenant(userId);
  for (let attempt = 1; ; attempt += 1) {
    const current = await getHeartbeat(userId, true);
    const settings = applyChange(current ?? defaultHeartbeat(userId), change, now);
    const record: HeartbeatRecord = {
      userId,
      ...settings,
      lastUpdated: now.toISOString(),
      version: (current?.version ?? 0) + 1,
      ...(current?.baseline ? { baseline: current.baseline } : {}),
      ...dueIndexKeys(userId, settings),
    };
    const condition = current ? { expression: 'version = :v', values: { ':v': current.version } } : { expression: 'attribute_not_exists(pk)' };
    try {
      await store.put({ ...keys.heartbeat(userId), ...record }, condition);
      return record;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt >= SAVE_ATTEMPTS) throw err;
    }
  }
}

/**
 * The heartbeat is on by default (HEARTBEAT_DEFAULTS): when an account's instance starts running,
 * an account with no settings of its own gets the defaults, due at once, so the sweep checks it from
 * then on. Settings the account saved (switched off included) stay as they are. One conditional put.
 */
export async function startDefaultHeartbeat(userId: string, now = new Date()): Promise<boolean> {
  if (!HEARTBEAT_DEFAULTS.enabled) return false;
  const settings = applyChange(defaultHeartbeat(userId), {}, now);
  const record: HeartbeatRecord = { userId, ...settings, lastUpdated: now.toISOString(), version: 1, ...dueIndexKeys(userId, settings) };
  try {
    await tenant(userId).put({ ...keys.heartbeat(userId), ...record }, { expression: 'attribute_not_exists(pk)' });
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** One page of the heartbeats of a shard that are due at `now`, oldest due first. */
export async function dueHeartbeats(shard: number, now: Date, limit: number, startKey?: Record<string, unknown>) {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p AND gsi1sk <= :now',
      ExpressionAttributeValues: { ':p': keys.heartbeatDuePartition(shard), ':now': now.toISOString() },
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { items: (out.Items ?? []) as HeartbeatRecord[], next: out.LastEvaluatedKey };
}

/**
 * Takes a due heartbeat for this run: advances lastHeartbeat/nextHeartbeat only if nextHeartbeat is
 * still the one the run saw (and the heartbeat still on). False when another run or a settings
 * change got there first; then this run leaves the user alone.
 */
export async function claimHeartbeat(item: HeartbeatRecord, now: Date, baseline?: HeartbeatBaseline): Promise<HeartbeatRecord | undefined> {
  const next = addFrequency(now, item.frequency).toISOString();
  const values: Record<string, unknown> = { ':seen': item.nextHeartbeat, ':on': true, ':now': now.toISOString(), ':next': next, ':one': 1 };
  const sets = ['lastHeartbeat = :now', 'nextHeartbeat = :next', 'gsi1sk = :next', 'version = version + :one'];
  if (baseline) {
    sets.push('baseline = :baseline');
    values[':baseline'] = baseline;
  }
  try {
    return await tenant(item.userId).update<HeartbeatRecord>(
      keys.heartbeat(item.userId),
      { expression: `SET ${sets.join(', ')}`, values },
      { expression: 'nextHeartbeat = :seen AND enabled = :on' },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}
