import type { Context } from 'aws-lambda';
import { deliverDueKeptMessages, type WakeDeliveryResult } from '../agent-chat/wake-delivery';
import { countStuckInProvisioning } from '../../shared/db/instances';
import { logger } from '../../shared/http/logger';
import { redriveStranded } from '../../shared/lifecycle/stranded';
import { emitMetrics, PLATFORM_METRICS } from '../../shared/platform-metrics';
import { sweepsOf } from '../../shared/sweeps';
import { type IdleStopResult, runIdleStops } from './idle-stop';
import { deliverDuePosts, type PostDeliveryResult } from './scheduled-posts';
import { runDueSchedules, type ScheduleRunResult } from './scheduled-prompts';
import { runHeartbeat, type SweepResult } from './sweep';

/** Time kept back from the Lambda's limit to finish the users already taken. */
const SAFETY_MS = 30_000;

/**
 * Past this, a launch has outlived every retry the provisioning queue allows (3 deliveries at a
 * 12-minute visibility timeout) and the DLQ consumer should have settled it: it is stuck.
 */
export const STUCK_PROVISIONING_MS = 45 * 60_000;

/**
 * Scheduled heartbeat (two EventBridge rules in CDK, a timer in the local stack; shared/sweeps.ts):
 * the 5-minute sweep checks health (sweep.ts), drives stranded launches and delivers channel posts;
 * the 1-minute sweep delivers messages kept while an instance woke, runs the due scheduled prompts
 * and stops idle instances (idle-stop.ts).
 */
export const handler = async (
  event?: unknown,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<
  Partial<SweepResult & { posts: PostDeliveryResult }> & { wakeDeliveries?: WakeDeliveryResult; schedules?: ScheduleRunResult; idle?: IdleStopResult }
> => {
  const sweeps = sweepsOf(event);
  const remaining = context?.getRemainingTimeInMillis?.();
  const deadline = remaining === undefined ? undefined : Date.now() + remaining - SAFETY_MS;
  const checks = sweeps.fiveMinute ? await runFiveMinuteSweep(deadline) : {};
  if (!sweeps.minute) return checks;
  // Messages kept while an instance woke go before the schedules, in the order they came.
  const wakeDeliveries = await deliverDueKeptMessages();
  if (wakeDeliveries.delivered || wakeDeliveries.failed) logger().info('kept messages delivered after a wake', { ...wakeDeliveries });
  const schedules = await runDueSchedules();
  const idle = await runIdleStops();
  if (idle.stopped) logger().info('idle instances stopped', { ...idle });
  return { ...checks, wakeDeliveries, schedules, idle };
};

async function runFiveMinuteSweep(deadline: number | undefined): Promise<SweepResult & { posts: PostDeliveryResult }> {
  const result = await runHeartbeat({ deadline });
  logger().info('heartbeat run', { ...result });
  // Emitted on every run, zero included, so the stuck-launch alarm always has data to judge.
  const stuck = await countStuckInProvisioning(new Date(Date.now() - STUCK_PROVISIONING_MS));
  emitMetrics({
    [PLATFORM_METRICS.heartbeatHealthy]: result.sampled - result.markedUnhealthy,
    [PLATFORM_METRICS.heartbeatUnhealthy]: result.markedUnhealthy,
    [PLATFORM_METRICS.stuckProvisioning]: stuck,
  });
  // Issue 20: agents and launches left in `provisioning` by a crash are driven again.
  const stranded = await redriveStranded();
  if (stranded.launchesTakenOver || stranded.agentsRequeued || stranded.agentsSettled) logger().warn('stranded provisioning driven again', { ...stranded });
  // event-scheduler posts that came due go out on their channels with the same tick.
  const posts = await deliverDuePosts();
  if (posts.due) logger().info('scheduled posts delivered', { ...posts });
  return { ...result, posts };
}
