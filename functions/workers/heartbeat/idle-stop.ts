import { requestProvisioning } from '#adapters/provisioning-queue';
import { getSubscription } from '#domain/billing/entitlements';
import { isPlanName, PLANS } from '#domain/billing/plans';
import { dueIdleWatches, IDLE_DUE_SHARDS, type IdleWatch, minutesLater, recordActivity, settleIdleCheck } from '#data/idle-watch';
import { getInstance, type InstanceRecord, transitionInstance } from '#data/instances';
import { logger } from '#http/logger';
import { lastWebsocketActivity } from './check';

/**
 * Idle auto-stop, with the minute sweep: reads the due idle watches
 * (data/idle-watch.ts) and stops a running instance whose last activity is older than the
 * account's `idleStopMinutes` (its own setting, else its plan's default; 0 = never) through the
 * lifecycle state machine with `stopReason: idle` (an `instance.stopped` event and webhook carry
 * it). It only stops: a stopped instance stays stopped until something starts it, and a stop the
 * owner asked for is never undone. Only a wake on demand starts it again (domain/lifecycle/wake.ts).
 */

const PER_SHARD = 50;

export interface IdleStopResult {
  due: number;
  stopped: number;
}

async function resolvedMinutes(watch: IdleWatch): Promise<number> {
  if (watch.idleStopMinutes !== undefined) return watch.idleStopMinutes;
  const sub = await getSubscription(watch.userId);
  const active = sub && ['active', 'trialing'].includes(sub.status) && isPlanName(sub.plan);
  return active ? PLANS[sub.plan as keyof typeof PLANS].idleStopMinutes : 0;
}

/**
 * A websocket that sends nothing never reaches the platform, only its runtime: asked before a stop,
 * the runtime's last websocket change within the idle period is recorded as the account's activity.
 */
async function keptAwakeByWebsocket(watch: IdleWatch, minutes: number, instance: InstanceRecord, now: Date): Promise<boolean> {
  const seen = await lastWebsocketActivity(watch.userId, instance, now);
  if (!seen || minutesLater(seen, minutes) <= now) return false;
  await recordActivity(watch.userId, seen);
  // Lands only when recordActivity wrote nothing (another write within its minute): the check comes back then.
  await settleIdleCheck({ ...watch, idleAfterMinutes: minutes }, minutes, minutesLater(seen, minutes));
  return true;
}

async function checkOne(watch: IdleWatch, now: Date): Promise<boolean> {
  const minutes = await resolvedMinutes(watch);
  const idleAt = watch.lastActivityAt && minutes > 0 ? minutesLater(watch.lastActivityAt, minutes) : undefined;
  if (minutes === 0 || !idleAt) {
    await settleIdleCheck(watch, minutes, undefined);
    return false;
  }
  if (idleAt > now) {
    await settleIdleCheck(watch, minutes, idleAt);
    return false;
  }
  const instance = await getInstance(watch.userId, true);
  if (instance?.status === 'running' && (await keptAwakeByWebsocket(watch, minutes, instance, now))) return false;
  // Unindexed first, on the activity read: activity since then keeps the instance (and its watch) running.
  if (!(await settleIdleCheck(watch, minutes, undefined))) return false;
  if (instance?.status !== 'running') return false;
  const stop = transitionInstance(
    watch.userId,
    'stop',
    { cause: 'idle', stopReason: 'idle', expect: { generation: instance.generation, status: 'running' }, jobOwner: (g) => `gen-${g}` },
    now,
  );
  // A stop that failed is checked again next minute rather than left running unwatched.
  const { changed } = await stop.catch(async (err: unknown) => {
    await settleIdleCheck({ ...watch, idleAfterMinutes: minutes }, minutes, minutesLater(now, 1)).catch(() => false);
    throw err;
  });
  // The provisioner stops the process or task itself, as for the owner's stop.
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId: watch.userId, generation: instance.generation + 1, op: 'stop' });
  if (changed) logger().info('idle instance stopped', { userId: watch.userId, idleMinutes: minutes, lastActivityAt: watch.lastActivityAt });
  return changed;
}

export async function runIdleStops(opts: { now?: Date } = {}): Promise<IdleStopResult> {
  const now = opts.now ?? new Date();
  const shards = Array.from({ length: IDLE_DUE_SHARDS }, (_, shard) => shard);
  const watches = (await Promise.all(shards.map((shard) => dueIdleWatches(shard, now, PER_SHARD)))).flat();
  const result: IdleStopResult = { due: watches.length, stopped: 0 };
  for (const watch of watches) {
    try {
      if (await checkOne(watch, now)) result.stopped += 1;
    } catch (err) {
      // One account's failure never stops the others; its watch stays due for the next minute.
      logger().error('idle check of one account failed', { userId: watch.userId, error: err as Error });
    }
  }
  return result;
}
