import { randomBytes } from 'node:crypto';
import { dueInIndex } from './due-index';
import { dueShardOf, HEARTBEAT_DUE_SHARDS } from './heartbeat';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Scheduled prompts at `USER#<id> / SCHEDULE#<agentId>#<scheduleId>`.
 *
 * While `active` a schedule is in gsi1 under `SCHEDDUE#<shard>` with `gsi1sk` = `nextRunAt`, so the
 * sweeper reads only due schedules (no Scan); paused and finished ones leave the index.
 *
 * A run's id is the schedule id plus its slot (the due time it serves). The run record
 * (`SCHEDRUN#<scheduleId>#<slot>`) is taken by a conditional put before anything runs, so two
 * sweepers never both run a slot; a run whose sweeper died is taken again once its lease is over
 * (at least once). The schedule moves to its next slot only after the run is recorded, on the
 * condition that it still waits on this slot. The next slot is computed from the time of the run,
 * not from the slot: runs missed while the platform was down are served by one run.
 */

export const SCHEDULE_DUE_SHARDS = HEARTBEAT_DUE_SHARDS;
const RUN_TTL_SECONDS = 30 * 24 * 3600;

export type ScheduleStatus = 'active' | 'paused' | 'done';

export interface ScheduleRecord {
  id: string;
  agentId: string;
  cron?: string;
  at?: string;
  prompt: string;
  sessionId?: string;
  status: ScheduleStatus;
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
  lastRun?: RunSummary;
}

export interface RunSummary {
  runId: string;
  slot: string;
  status: RunStatus;
  reason?: string;
  at: string;
}

export type RunStatus = 'running' | 'succeeded' | 'skipped' | 'failed';

export interface RunRecord extends RunSummary {
  scheduleId: string;
  agentId: string;
  leaseUntil: string;
  answer?: string;
}

export type DueSchedule = ScheduleRecord & { userId: string; gsi1sk: string };

export class ScheduleLimitError extends DomainError {
  constructor(readonly limit: number) {
    super('limitReached', `schedule limit reached: the account's plan allows ${limit}`, 'SCHEDULE_LIMIT_REACHED', { limit });
  }
}

export const newScheduleId = () => `sch_${randomBytes(10).toString('hex')}`;

const view = (item: ScheduleRecord & Record<string, unknown>): ScheduleRecord => {
  const { pk: _pk, sk: _sk, gsi1pk: _gp, gsi1sk: _gs, userId: _u, ...record } = item;
  return record as ScheduleRecord;
};

const dueIndex = (userId: string, nextRunAt: string | null) => (nextRunAt ? { gsi1pk: keys.scheduleDuePartition(dueShardOf(userId)), gsi1sk: nextRunAt } : {});

/** Creates a schedule of an owned agent under the account's schedule limit; undefined when the agent is not the caller's. */
export async function createSchedule(
  userId: string,
  input: Pick<ScheduleRecord, 'agentId' | 'cron' | 'at' | 'prompt' | 'sessionId' | 'nextRunAt'> & { id?: string; status?: ScheduleStatus },
  limit: number,
  now = new Date(),
): Promise<ScheduleRecord | undefined> {
  const at = now.toISOString();
  const status = input.status ?? 'active';
  const record: ScheduleRecord = { ...input, id: input.id ?? newScheduleId(), status, createdAt: at, updatedAt: at };
  try {
    await transactRetrying([
      tx.conditionCheck(keys.agent(userId, input.agentId), { expression: 'attribute_exists(pk)' }),
      tx.put(
        { ...keys.schedule(userId, input.agentId, record.id), ...record, userId, ...(status === 'active' ? dueIndex(userId, record.nextRunAt) : {}) },
        { expression: 'attribute_not_exists(pk)' },
      ),
      tx.update(
        keys.scheduleCount(userId),
        { expression: 'ADD schedules :one', values: { ':one': 1 } },
        { expression: 'attribute_not_exists(schedules) OR schedules < :limit', values: { ':limit': limit } },
      ),
    ]);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    if (err.reasons[0] === 'ConditionalCheckFailed') return undefined;
    if (err.reasons[2] === 'ConditionalCheckFailed') throw new ScheduleLimitError(limit);
    throw err;
  }
  return record;
}

export async function listSchedules(userId: string, agentId: string): Promise<ScheduleRecord[]> {
  return (await tenant(userId).queryAll<ScheduleRecord & Record<string, unknown>>(keys.schedulePrefix(agentId), { consistent: true })).map(view);
}

export async function getSchedule(userId: string, agentId: string, scheduleId: string): Promise<ScheduleRecord | undefined> {
  const item = await tenant(userId).get<ScheduleRecord & Record<string, unknown>>(keys.schedule(userId, agentId, scheduleId), true);
  return item && view(item);
}

/** Pauses (leaves the due index) or resumes (due at `nextRunAt`) a schedule; undefined when there is none. */
export async function setScheduleState(
  userId: string,
  agentId: string,
  scheduleId: string,
  change: { status: 'active'; nextRunAt: string } | { status: 'paused' },
  now = new Date(),
): Promise<ScheduleRecord | undefined> {
  const active = change.status === 'active';
  try {
    const item = await tenant(userId).update<ScheduleRecord & Record<string, unknown>>(
      keys.schedule(userId, agentId, scheduleId),
      active
        ? {
            expression: 'SET #status = :status, nextRunAt = :next, updatedAt = :now, gsi1pk = :gpk, gsi1sk = :next',
            names: { '#status': 'status' },
            values: { ':status': 'active', ':next': change.nextRunAt, ':now': now.toISOString(), ':gpk': keys.scheduleDuePartition(dueShardOf(userId)) },
          }
        : {
            expression: 'SET #status = :status, nextRunAt = :none, updatedAt = :now REMOVE gsi1pk, gsi1sk',
            names: { '#status': 'status' },
            values: { ':status': 'paused', ':none': null, ':now': now.toISOString() },
          },
      { expression: 'attribute_exists(pk)' },
    );
    return view(item);
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

export async function deleteSchedule(userId: string, agentId: string, scheduleId: string): Promise<boolean> {
  try {
    await transactRetrying([
      tx.delete(keys.schedule(userId, agentId, scheduleId), { expression: 'attribute_exists(pk)' }),
      tx.update(keys.scheduleCount(userId), { expression: 'ADD schedules :minus', values: { ':minus': -1 } }),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}

/** One page of the schedules of a shard due at `now`, oldest first. */
export const dueSchedules = (shard: number, now: Date, limit: number) => dueInIndex<DueSchedule>(keys.scheduleDuePartition(shard), now, limit);

/**
 * Takes the run of one slot: `claimed` for exactly one sweeper (or again once a dead sweeper's lease
 * is over), `finished` when the slot already ran, `busy` while another sweeper runs it.
 */
export async function claimRun(
  userId: string,
  schedule: ScheduleRecord,
  slot: string,
  leaseUntil: Date,
  now = new Date(),
): Promise<'claimed' | 'finished' | 'busy'> {
  const runId = `${schedule.id}#${slot}`;
  const run: RunRecord = {
    runId,
    scheduleId: schedule.id,
    agentId: schedule.agentId,
    slot,
    status: 'running',
    at: now.toISOString(),
    leaseUntil: leaseUntil.toISOString(),
  };
  try {
    await tenant(userId).put(
      { ...keys.scheduleRun(userId, schedule.id, slot), ...run, expiresAt: Math.floor(now.getTime() / 1000) + RUN_TTL_SECONDS },
      {
        expression: 'attribute_not_exists(pk) OR (#status = :running AND leaseUntil < :now)',
        names: { '#status': 'status' },
        values: { ':running': 'running', ':now': now.toISOString() },
      },
    );
    return 'claimed';
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
  const existing = await tenant(userId).get<RunRecord & Record<string, unknown>>(keys.scheduleRun(userId, schedule.id, slot), true);
  return existing?.status === 'running' ? 'busy' : 'finished';
}

/** Gives a claimed slot back unrun (its instance is still waking): the next tick claims it again. */
export async function releaseRun(userId: string, scheduleId: string, slot: string): Promise<void> {
  await tenant(userId).delete(keys.scheduleRun(userId, scheduleId, slot), {
    expression: '#status = :running',
    names: { '#status': 'status' },
    values: { ':running': 'running' },
  });
}

export async function finishRun(
  userId: string,
  scheduleId: string,
  slot: string,
  outcome: { status: Exclude<RunStatus, 'running'>; reason?: string; answer?: string },
  now = new Date(),
) {
  await tenant(userId).update(keys.scheduleRun(userId, scheduleId, slot), {
    expression: `SET #status = :status, finishedAt = :now${outcome.reason ? ', reason = :reason' : ''}${outcome.answer ? ', answer = :answer' : ''}`,
    names: { '#status': 'status' },
    values: {
      ':status': outcome.status,
      ':now': now.toISOString(),
      ...(outcome.reason ? { ':reason': outcome.reason } : {}),
      ...(outcome.answer ? { ':answer': outcome.answer.slice(0, 2000) } : {}),
    },
  });
}

/** The runs of a schedule, oldest first. */
export async function listRuns(userId: string, scheduleId: string): Promise<RunRecord[]> {
  const items = await tenant(userId).queryAll<RunRecord & Record<string, unknown>>(keys.scheduleRunPrefix(scheduleId), { consistent: true });
  return items.map(({ pk: _pk, sk: _sk, expiresAt: _ttl, ...run }) => run as RunRecord);
}

/**
 * Moves a schedule past `slot` to `next` (null: a one-time schedule is done), recording the run,
 * only while it still waits on that slot; false when another sweeper or the owner moved it first.
 */
export async function advanceSchedule(
  userId: string,
  schedule: ScheduleRecord,
  slot: string,
  next: string | null,
  lastRun: RunSummary | undefined,
  now = new Date(),
): Promise<boolean> {
  const sets = ['nextRunAt = :next', 'updatedAt = :now', ...(lastRun ? ['lastRun = :last'] : [])];
  const values = { ':now': now.toISOString(), ...(lastRun ? { ':last': lastRun } : {}) };
  try {
    await tenant(userId).update(
      keys.schedule(userId, schedule.agentId, schedule.id),
      next
        ? { expression: `SET ${sets.join(', ')}, gsi1sk = :next`, values: { ...values, ':next': next } }
        : {
            expression: `SET ${sets.join(', ')}, #status = :done REMOVE gsi1pk, gsi1sk`,
            names: { '#status': 'status' },
            values: { ...values, ':next': null, ':done': 'done' },
          },
      { expression: 'nextRunAt = :slot AND #status = :active', names: { '#status': 'status' }, values: { ':slot': slot, ':active': 'active' } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** Counts a run against the account's runs of the UTC day; false at the plan's limit. */
export async function countRunOfDay(userId: string, day: string, limit: number, now = new Date()): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.scheduleRunDay(userId, day),
      {
        expression: 'ADD runs :one SET expiresAt = if_not_exists(expiresAt, :ttl)',
        values: { ':one': 1, ':ttl': Math.floor(now.getTime() / 1000) + 3 * 86_400 },
      },
      { expression: 'attribute_not_exists(runs) OR runs < :limit', values: { ':limit': limit } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
