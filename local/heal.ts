import { localLauncher } from '#adapters/launcher-local';
import { instanceConfig } from '#platform/config';
import { logger } from '#http/logger';
import { relaunchAfterExit, type RelaunchResult } from '#domain/lifecycle/relaunch';
import { redriveStranded } from '#domain/lifecycle/stranded';
import { backfillSubdomainLookups } from '#domain/lifecycle/subdomain-backfill';

/**
 * Self-healing in the local stack. What ECS task-state events do in AWS, the runtime's `exit` does
 * here: a runtime that ends on its own is relaunched (domain/lifecycle/relaunch.ts). And at start,
 * when no worker of the previous run can still be alive, the work it left in `provisioning` is
 * driven again at once (domain/lifecycle/stranded.ts) instead of after the usual wait, and the
 * instances without a subdomain look-up get theirs (domain/lifecycle/subdomain-backfill.ts).
 */
export async function startLocalHealing(startedAt: Date): Promise<{ stop(): void }> {
  if (instanceConfig().launcher === 'local') healLocalExits();
  const stranded = await redriveStranded({ olderThan: startedAt, workersDeadBefore: startedAt });
  if (stranded.launchesTakenOver || stranded.agentsRequeued || stranded.agentsSettled)
    logger().warn('work stranded by the previous run driven again', { ...stranded });
  // Instances recorded before the edge's subdomain look-up become routable from the start (the heartbeat goes on with a larger table).
  // A failed pass is only late: the next run goes on from the stored cursor.
  const lookups = await backfillSubdomainLookups().catch((err: Error) => logger().error('backfilling subdomain look-ups failed', err));
  if (lookups?.found) logger().info('instance subdomain look-ups backfilled', { ...lookups });
  return {
    stop() {
      if (instanceConfig().launcher === 'local') localLauncher().onUnexpectedExit(undefined);
    },
  };
}

/** Every runtime this process's launcher started that ends on its own is relaunched; `settled` reports each outcome (tests). */
export function healLocalExits(settled?: (outcome: Promise<RelaunchResult>) => void): void {
  localLauncher().onUnexpectedExit((exit) => {
    // Ctrl-C reaches the runtimes too (the terminal's process group): that is the stack stopping, not a crash.
    if (exit.reason === 'signal SIGINT') return;
    const outcome = relaunchAfterExit({ userId: exit.userId, generation: exit.generation, handleId: exit.handle.id, reason: exit.reason });
    outcome.catch((err: Error) => logger().error('relaunching an instance that exited failed', { userId: exit.userId, error: err }));
    settled?.(outcome);
  });
}
