import { requestProvisioning } from '#adapters/provisioning-queue';
import { localLauncher } from '#adapters/launcher-local';
import { IllegalTransitionError, settleLaunch, transitionInstance, type InstanceOp, type InstanceRecord } from '#data/instances';
import { instancesRecordedLive } from '#data/local-instances';
import { logger } from '#http/logger';
import { relaunchAfterExit } from '#domain/lifecycle/relaunch';

/**
 * Makes the stored instance records match the processes this local stack runs. The runtimes die
 * with the stack (Ctrl-C, a crash) but their records say `running`; a launch in flight when the
 * stack stopped lost its queue message with the in-memory SQS emulator.
 * - `relaunch` (on start): every such instance goes through the normal lifecycle again (a
 *   restart, or a start after its interrupted launch is settled as failed) and the provisioner
 *   launches it, on the same port as before (launcher-local.ts), so its URLs keep working.
 * - `mark-dead` (each heartbeat tick): a `running` instance whose process has exited and whose
 *   exit went unnoticed is relaunched (domain/lifecycle/relaunch.ts), as the ECS task state event
 *   does in AWS; a launch in flight is the provisioner's.
 */

export type ReconcileMode = 'relaunch' | 'mark-dead';

export interface ReconcileResult {
  checked: number;
  relaunched: number;
  markedDead: number;
}

async function processAlive(instance: InstanceRecord): Promise<boolean> {
  if (instance.handle?.launcher !== 'local') return false;
  return (await localLauncher().locate(instance.handle)).state !== 'stopped';
}

async function relaunch(instance: InstanceRecord): Promise<boolean> {
  const { userId, generation } = instance;
  let op: InstanceOp = 'restart';
  if (instance.status === 'provisioning') {
    await settleLaunch(userId, generation, { status: 'error', reason: 'the local stack stopped during the launch' });
    op = 'start';
  }
  let after: InstanceRecord;
  try {
    after = (await transitionInstance(userId, op, { jobOwner: (g) => `gen-${g}` })).after;
  } catch (err) {
    // Someone else moved it meanwhile (a lifecycle request): theirs is the newer intent.
    if (err instanceof IllegalTransitionError) return false;
    throw err;
  }
  try {
    await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op });
  } catch (err) {
    await settleLaunch(userId, after.generation, { status: 'error', reason: 'the relaunch could not be queued' });
    throw err;
  }
  return true;
}

/** A dead process the exit listener missed is relaunched like any unexpected exit; without a handle to match, it is `error`. */
async function healOrMarkDead(instance: InstanceRecord): Promise<boolean> {
  const { userId, generation, handle } = instance;
  const reason = 'the instance process is not running';
  if (handle && (await relaunchAfterExit({ userId, generation, handleId: handle.id, reason })).outcome !== 'ignored') return true;
  return !!(await settleLaunch(userId, generation, { status: 'error', reason }));
}

export async function reconcileLocalInstances(mode: ReconcileMode): Promise<ReconcileResult> {
  const result: ReconcileResult = { checked: 0, relaunched: 0, markedDead: 0 };
  for (const instance of await instancesRecordedLive()) {
    result.checked += 1;
    if (mode === 'mark-dead' && instance.status !== 'running') continue;
    try {
      if (await processAlive(instance)) continue;
      if (mode === 'relaunch') {
        if (await relaunch(instance)) result.relaunched += 1;
      } else if (await healOrMarkDead(instance)) {
        result.markedDead += 1;
        logger().warn('local instance found dead', { userId: instance.userId, generation: instance.generation });
      }
    } catch (err) {
      // One account's failure never stops the others.
      logger().error('reconciling a local instance failed', { userId: instance.userId, error: err as Error });
    }
  }
  return result;
}
