import { randomBytes } from 'node:crypto';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Agent checkpoints at `USER#<id> / CHECKPOINT#<agentId>#<checkpointId>`: what the checkpoint is
 * (kind, name, size, counts) and where its snapshot is kept in file storage; the snapshot itself
 * is too large for an item. The named checkpoints of an agent are counted at
 * `CHECKPOINTCOUNT#<agentId>` in the same transaction as each create and delete, so concurrent
 * creates cannot pass the plan's limit. Automatic ones are not counted; they carry the table's TTL.
 */

export type CheckpointKind = 'named' | 'auto';

export interface CheckpointRecord {
  id: string;
  agentId: string;
  kind: CheckpointKind;
  name: string;
  reason?: string;
  createdAt: string;
  /** auto: when it stops being offered (the TTL removes the item some time after). */
  expiresAtIso?: string;
  sizeBytes: number;
  objectKey: string;
  contents: { memoryKeys: number; skills: number; schedules: number; messages: number };
}

export class CheckpointLimitError extends DomainError {
  constructor(current: number, limit: number) {
    super('limitReached', `checkpoint limit reached: the plan allows ${limit} named checkpoints per agent`, 'CHECKPOINT_LIMIT_REACHED', { current, limit });
  }
}

export const newCheckpointId = () => `ckp_${randomBytes(10).toString('hex')}`;

const view = (item: CheckpointRecord & Record<string, unknown>): CheckpointRecord => {
  const { pk: _pk, sk: _sk, expiresAt: _ttl, ...record } = item;
  return record as CheckpointRecord;
};

const live = (record: CheckpointRecord, now: Date) => !record.expiresAtIso || record.expiresAtIso > now.toISOString();

/** The agent's named checkpoints counted now (0 before the first). */
export async function namedCheckpointCount(userId: string, agentId: string): Promise<number> {
  const item = await tenant(userId).get<{ count?: number }>(keys.checkpointCount(userId, agentId), true);
  return Number(item?.count ?? 0);
}

/**
 * Stores the record of a checkpoint whose snapshot is already written; a named one takes a unit of
 * the agent's count under `limit`. Undefined when the agent is not the caller's.
 */
export async function putCheckpoint(userId: string, record: CheckpointRecord, limit: number): Promise<CheckpointRecord | undefined> {
  const ttl = record.expiresAtIso ? { expiresAt: Math.floor(new Date(record.expiresAtIso).getTime() / 1000) } : {};
  const items: TransactItem[] = [
    tx.conditionCheck(keys.agent(userId, record.agentId), { expression: 'attribute_exists(pk)' }),
    tx.put({ ...keys.checkpoint(userId, record.agentId, record.id), ...record, ...ttl }, { expression: 'attribute_not_exists(pk)' }),
  ];
  if (record.kind === 'named') {
    items.push(
      tx.update(
        keys.checkpointCount(userId, record.agentId),
        { expression: 'ADD #count :one', names: { '#count': 'count' }, values: { ':one': 1 } },
        { expression: 'attribute_not_exists(#count) OR #count < :limit', names: { '#count': 'count' }, values: { ':limit': limit } },
      ),
    );
  }
  try {
    await transactRetrying(items);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    if (err.reasons[0] === 'ConditionalCheckFailed') return undefined;
    if (err.reasons[2] === 'ConditionalCheckFailed') throw new CheckpointLimitError(await namedCheckpointCount(userId, record.agentId), limit);
    throw err;
  }
  return record;
}

/** The agent's checkpoints still offered, newest first. */
export async function listCheckpoints(userId: string, agentId: string, now = new Date()): Promise<CheckpointRecord[]> {
  const items = await tenant(userId).queryAll<CheckpointRecord & Record<string, unknown>>(keys.checkpointPrefix(agentId), { consistent: true });
  return items
    .map(view)
    .filter((r) => live(r, now))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
}

export async function getCheckpoint(userId: string, agentId: string, checkpointId: string, now = new Date()): Promise<CheckpointRecord | undefined> {
  const item = await tenant(userId).get<CheckpointRecord & Record<string, unknown>>(keys.checkpoint(userId, agentId, checkpointId), true);
  const record = item && view(item);
  return record && live(record, now) ? record : undefined;
}

/** Removes a checkpoint's record (a named one gives its unit of count back); the removed record, or undefined when there was none. */
export async function deleteCheckpointRecord(userId: string, agentId: string, checkpointId: string): Promise<CheckpointRecord | undefined> {
  const item = await tenant(userId).get<CheckpointRecord & Record<string, unknown>>(keys.checkpoint(userId, agentId, checkpointId), true);
  if (!item) return undefined;
  const record = view(item);
  try {
    await transactRetrying([
      tx.delete(keys.checkpoint(userId, agentId, checkpointId), { expression: 'attribute_exists(pk)' }),
      ...(record.kind === 'named'
        ? [
            tx.update(
              keys.checkpointCount(userId, agentId),
              { expression: 'ADD #count :minus', names: { '#count': 'count' }, values: { ':minus': -1 } },
              { expression: '#count > :zero', names: { '#count': 'count' }, values: { ':zero': 0 } },
            ),
          ]
        : []),
    ]);
  } catch (err) {
    // Deleted meanwhile by a concurrent call: that call gave the count back.
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
  return record;
}
