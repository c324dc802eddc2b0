import type { Context } from 'aws-lambda';
import { deliverDueKeptMessages, type WakeDeliveryResult } from '#domain/chat/wake-delivery';
import { logger } from '#http/logger';
import { sweepsOf } from '#contract/sweeps';
import type { FiveMinuteResult } from './five-minute';
import { type IdleStopResult, runIdleStops } from './idle-stop';
import { runDueSchedules, type ScheduleRunResult } from './scheduled-prompts';

/** Time kept back from the Lambda's limit to finish the users already taken. */
const SAFETY_MS = 30_000;

/**
 * The 5-minute sweep's modules (health probes, stranded launches, channel posts, the metrics
 * library) are loaded by the first 5-minute run: a container woken by the 1-minute sweep, four
 * runs in five, starts without them.
 */
const fiveMinuteSweep = () => import('./five-minute');

/**
 * Scheduled heartbeat (two EventBridge rules in CDK, a timer in the local stack; contract/sweeps.ts):
 * the 5-minute sweep checks health (sweep.ts), drives stranded launches and delivers channel posts;
 * the 1-minute sweep delivers messages kept while an instance woke, runs the due scheduled prompts
 * and stops idle instances (idle-stop.ts).
 */
export const handler = async (
  event?: unknown,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<Partial<FiveMinuteResult> & { wakeDeliveries?: WakeDeliveryResult; schedules?: ScheduleRunResult; idle?: IdleStopResult }> => {
  const sweeps = sweepsOf(event);
  const remaining = context?.getRemainingTimeInMillis?.();
  const deadline = remaining === undefined ? undefined : Date.now() + remaining - SAFETY_MS;
  const checks = sweeps.fiveMinute ? await (await fiveMinuteSweep()).runFiveMinuteSweep(deadline) : {};
  if (!sweeps.minute) return checks;
  // Messages kept while an instance woke go before the schedules, in the order they came.
  const wakeDeliveries = await deliverDueKeptMessages();
  if (wakeDeliveries.delivered || wakeDeliveries.failed) logger().info('kept messages delivered after a wake', { ...wakeDeliveries });
  const schedules = await runDueSchedules();
  const idle = await runIdleStops();
  if (idle.stopped) logger().info('idle instances stopped', { ...idle });
  return { ...checks, wakeDeliveries, schedules, idle };
};
