import { logger } from '#platform/logger';
import { dueInIndex } from './due-index';
import { dueShardOf, HEARTBEAT_DUE_SHARDS } from './heartbeat';
import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * Idle auto-stop: one `IDLEWATCH` item per account holds `lastActivityAt` (a message,
 * a websocket connection, a scheduled run, an A2A message or a skill call), the owner's
 * `idleStopMinutes` setting (absent: the plan's default) and `idleAfterMinutes`, the setting the
 * sweeper last resolved. While a check is due the item sits in gsi1 under `IDLEDUE#<shard>` with
 * `gsi1sk` = when to check, so the minute sweep reads only due accounts. Activity writes at most
 * once a minute per account (a per-container memo and a condition, like API keys' `lastUsed`).
 */

export const IDLE_DUE_SHARDS = HEARTBEAT_DUE_SHARDS;
const TOUCH_EVERY_MS = 60_000;
/** Before the sweeper resolved an account's setting, its first check comes after the shortest one. */
const UNRESOLVED_CHECK_MINUTES = 1;
const MEMO_MAX_ENTRIES = 10_000;

export interface IdleWatch extends Record<string, unknown> {
  userId: string;
  lastActivityAt?: string;
  idleStopMinutes?: number;
  idleAfterMinutes?: number;
}

const due = (userId: string, at: Date) => ({ gsi1pk: keys.idleDuePartition(dueShardOf(userId)), gsi1sk: at.toISOString() });
const minutesLater = (iso: string | Date, minutes: number) => new Date(new Date(iso).getTime() + minutes * 60_000);

/** userId → when this container last wrote its activity, and the setting that write read back. */
const memo = new Map<string, { at: number; minutes?: number }>();

/** Records activity on the account's instance; most calls write nothing (at most once a minute). */
export async function recordActivity(userId: string, now = new Date()): Promise<void> {
  const seen = memo.get(userId);
  if (seen && now.getTime() - seen.at < TOUCH_EVERY_MS) return;
  const minutes = seen?.minutes ?? UNRESOLVED_CHECK_MINUTES;
  const checkAt = minutes === 0 ? undefined : due(userId, minutesLater(now, minutes));
  try {
    const after = await tenant(userId).update<IdleWatch>(
      keys.idleWatch(userId),
      {
        expression: `SET userId = :userId, lastActivityAt = :now${checkAt ? ', gsi1pk = :pk, gsi1sk = :sk' : ''}${checkAt ? '' : ' REMOVE gsi1pk, gsi1sk'}`,
        values: { ':userId': userId, ':now': now.toISOString(), ...(checkAt ? { ':pk': checkAt.gsi1pk, ':sk': checkAt.gsi1sk } : {}) },
      },
      {
        expression: 'attribute_not_exists(lastActivityAt) OR lastActivityAt < :minuteAgo',
        values: { ':minuteAgo': new Date(now.getTime() - TOUCH_EVERY_MS).toISOString() },
      },
    );
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(userId, { at: now.getTime(), minutes: after.idleAfterMinutes });
  } catch (err) {
    // Another container wrote within the minute: that write counts. Any other failure must not fail
    // the message that caused it: the instance then stops at most one idle period early.
    if (!(err instanceof ConditionFailedError)) logger().warn('activity not recorded', { userId, error: err as Error });
    else memo.set(userId, { at: now.getTime(), minutes: seen?.minutes });
  }
}

/** Forgets this container's memo (tests drive one account through several injected clocks). */
export const forgetActivityMemo = () => memo.clear();

export async function getIdleWatch(userId: string): Promise<IdleWatch | undefined> {
  return tenant(userId).get<IdleWatch>(keys.idleWatch(userId), true);
}

/** The owner's setting (null: back to the plan's default); the next check is re-planned from the last activity. */
export async function setIdleStopMinutes(userId: string, minutes: number | null, now = new Date()): Promise<void> {
  const current = await getIdleWatch(userId);
  const checkAt =
    minutes === 0 ? undefined : due(userId, current?.lastActivityAt ? minutesLater(current.lastActivityAt, minutes ?? UNRESOLVED_CHECK_MINUTES) : now);
  const sets = ['userId = :userId', ...(minutes === null ? [] : ['idleStopMinutes = :minutes']), ...(checkAt ? ['gsi1pk = :pk', 'gsi1sk = :sk'] : [])];
  const removes = ['idleAfterMinutes', ...(minutes === null ? ['idleStopMinutes'] : []), ...(checkAt ? [] : ['gsi1pk', 'gsi1sk'])];
  await tenant(userId).update(keys.idleWatch(userId), {
    expression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
    values: { ':userId': userId, ...(minutes === null ? {} : { ':minutes': minutes }), ...(checkAt ? { ':pk': checkAt.gsi1pk, ':sk': checkAt.gsi1sk } : {}) },
  });
  memo.delete(userId);
}

export async function dueIdleWatches(shard: number, now: Date, limit: number): Promise<IdleWatch[]> {
  return dueInIndex<IdleWatch>(keys.idleDuePartition(shard), now, limit);
}

/**
 * After a check: `nextCheckAt` re-plans it (the account was not idle long enough), undefined takes
 * the account out of the index until its next activity. Conditional on the activity the check
 * read, so activity written meanwhile wins.
 */
export async function settleIdleCheck(watch: IdleWatch, resolvedMinutes: number, nextCheckAt: Date | undefined): Promise<boolean> {
  const checkAt = nextCheckAt ? due(watch.userId, nextCheckAt) : undefined;
  try {
    await tenant(watch.userId).update(
      keys.idleWatch(watch.userId),
      {
        expression: `SET idleAfterMinutes = :minutes${checkAt ? ', gsi1pk = :pk, gsi1sk = :sk' : ' REMOVE gsi1pk, gsi1sk'}`,
        values: { ':minutes': resolvedMinutes, ...(checkAt ? { ':pk': checkAt.gsi1pk, ':sk': checkAt.gsi1sk } : {}) },
      },
      watch.lastActivityAt
        ? { expression: 'lastActivityAt = :seen', values: { ':seen': watch.lastActivityAt } }
        : { expression: 'attribute_not_exists(lastActivityAt)' },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export { minutesLater };
