import { countStuckInProvisioning } from '#data/instances';
import { logger } from '#http/logger';
import { redriveStranded } from '#domain/lifecycle/stranded';
import { backfillSubdomainLookups } from '#domain/lifecycle/subdomain-backfill';
import { emitMetrics, PLATFORM_METRICS } from '#platform/metrics';
import { deliverDuePosts, type PostDeliveryResult } from './scheduled-posts';
import { runHeartbeat, type SweepResult } from './sweep';

/**
 * Past this, a launch has outlived every retry the provisioning queue allows (3 deliveries at a
 * 12-minute visibility timeout) and the DLQ consumer should have settled it: it is stuck.
 */
export const STUCK_PROVISIONING_MS = 45 * 60_000;

export type FiveMinuteResult = SweepResult & { posts: PostDeliveryResult };

/** The 5-minute sweep: health checks (sweep.ts), the stuck-launch metric, stranded launches, missing subdomain look-ups, due channel posts. */
export async function runFiveMinuteSweep(deadline: number | undefined): Promise<FiveMinuteResult> {
  const result = await runHeartbeat({ deadline });
  logger().info('heartbeat run', { ...result });
  // Emitted on every run, zero included, so the stuck-launch alarm always has data to judge.
  const stuck = await countStuckInProvisioning(new Date(Date.now() - STUCK_PROVISIONING_MS));
  emitMetrics({
    [PLATFORM_METRICS.heartbeatHealthy]: result.sampled - result.markedUnhealthy,
    [PLATFORM_METRICS.heartbeatUnhealthy]: result.markedUnhealthy,
    [PLATFORM_METRICS.stuckProvisioning]: stuck,
  });
  // Agents and launches left in `provisioning` by a crash are driven again.
  const stranded = await redriveStranded();
  if (stranded.launchesTakenOver || stranded.agentsRequeued || stranded.agentsSettled) logger().warn('stranded provisioning driven again', { ...stranded });
  // Instances recorded before the edge's subdomain look-up get it, a bounded slice per run.
  // A failed pass is only late: the next run goes on from the stored cursor.
  const lookups = await backfillSubdomainLookups().catch((err: Error) => logger().error('backfilling subdomain look-ups failed', err));
  if (lookups?.found) logger().info('instance subdomain look-ups backfilled', { ...lookups });
  // event-scheduler posts that came due go out on their channels with the same tick.
  const posts = await deliverDuePosts();
  if (posts.due) logger().info('scheduled posts delivered', { ...posts });
  return { ...result, posts };
}
