import { requestProvisioning } from '#adapters/provisioning-queue';
import { healingConfig } from '#platform/config';
import { agentsPendingSince, getAgent, type PendingAgentRef } from '#data/agents';
import {
  getInstance,
  instancesProvisioningSince,
  settleLaunch,
  settlePendingAgents,
  transitionInstance,
  type InstanceOp,
  type InstanceRecord,
} from '#data/instances';
import { agentJobId, jobState, releaseJob, type JobState } from '#data/provision-jobs';
import { getUser } from '#data/users';
import { logger } from '#platform/logger';

/**
 * No stranded work: every accepted agent reaches `running` or `error` within a bounded
 * time after any crash. The agent row and its queue message are two writes; a crash between them,
 * a lost in-memory local queue, or a worker that died mid-launch leaves an agent (and its quota)
 * in `provisioning` with nothing to move it on. This reconciler finds such work through the two
 * sparse provisioning listings (agents, instances; no scan) and drives it again through the
 * provisioner's own idempotency:
 * - a launch in `provisioning` longer than the limit whose job no live worker holds is taken over
 *   by a new generation of the same operation (a conditional transition on the generation read, so
 *   two reconcilers, or a launch that settles meanwhile, leave one outcome);
 * - an agent in `provisioning` longer than the limit, not waiting on a launch, is queued again
 *   (a dead worker's claim released first), or joins / fails with its instance when its job ran.
 * It runs with each heartbeat (AWS: the EventBridge schedule; locally: the heartbeat tick, and once
 * at start, when no worker from before the start can still be alive).
 */

export interface RedriveOptions {
  now?: Date;
  /** Work in `provisioning` since before this is stranded unless a worker holds it; default now − PROVISIONING_REDRIVE_AFTER_SECONDS. */
  olderThan?: Date;
  /** Claims taken before this are known dead (the local stack at start); in AWS a claim is live until its lease ends. */
  workersDeadBefore?: Date;
}

export interface RedriveResult {
  launchesTakenOver: number;
  agentsRequeued: number;
  agentsSettled: number;
}

const heldByLiveWorker = (job: JobState, now: Date, deadBefore?: Date) =>
  job.state === 'claimed' && job.leaseUntil > now.getTime() && !(deadBefore && job.claimedAt < deadBefore.getTime());

/** The operation that relaunches a stranded launch: its own, except a first launch or a start, which a restart redoes. */
const redoOf = (op: InstanceOp): InstanceOp => (op === 'update' || op === 'repair' || op === 'reset-memory' ? op : 'restart');

async function takeOverLaunch(instance: InstanceRecord, now: Date, deadBefore?: Date): Promise<boolean> {
  const { userId, generation } = instance;
  if (instance.jobOwner && heldByLiveWorker(await jobState(userId, instance.jobOwner), now, deadBefore)) return false;
  const { changed, after } = await transitionInstance(
    userId,
    redoOf(instance.op),
    {
      cause: 'reconciler',
      expect: { generation, status: 'provisioning' },
      jobOwner: (next) => `gen-${next}`,
      reason: `the launch of generation ${generation} was stranded (no worker held it); launched again`,
    },
    now,
  );
  if (!changed) return false;
  try {
    await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: after.op });
  } catch (err) {
    await settleLaunch(
      userId,
      after.generation,
      { status: 'error', reason: 'a stranded launch could not be queued again', failWaiting: true },
      new Date(),
      'reconciler',
    );
    await settlePendingAgents(userId, 'a stranded launch could not be queued again');
    throw err;
  }
  logger().warn('stranded launch taken over', { userId, stranded: generation, generation: after.generation, op: after.op });
  return true;
}

async function redriveAgent(ref: PendingAgentRef, now: Date, deadBefore?: Date): Promise<'requeued' | 'settled' | 'waiting'> {
  const { userId, agentId } = ref;
  if ((await getAgent(userId, agentId, true))?.phase !== 'provisioning') return 'waiting';
  const instance = await getInstance(userId, true);
  // The launch under way settles every waiting agent; when it is stranded itself, takeOverLaunch drives it.
  if (instance?.status === 'provisioning') return 'waiting';
  const jobId = agentJobId(agentId);
  const job = await jobState(userId, jobId);
  if (heldByLiveWorker(job, now, deadBefore)) return 'waiting';
  if (job.state === 'done') {
    // Its job ran and handed it to a launch that settled without it (a crash in between): it follows the instance now.
    if (!instance) return 'waiting';
    await settlePendingAgents(userId);
    return 'settled';
  }
  if (job.state === 'claimed') await releaseJob(userId, jobId, job.token);
  const ownerEmail = instance?.ownerEmail ?? (await getUser(userId, true))?.email;
  if (!ownerEmail) return 'waiting';
  await requestProvisioning({ kind: 'agent', userId, agentId, ownerEmail });
  logger().warn('stranded agent queued again', { userId, agentId, acceptedAt: ref.createdAt });
  return 'requeued';
}

export async function redriveStranded(opts: RedriveOptions = {}): Promise<RedriveResult> {
  const now = opts.now ?? new Date();
  const result: RedriveResult = { launchesTakenOver: 0, agentsRequeued: 0, agentsSettled: 0 };
  const after = healingConfig().provisioningRedriveAfterMs;
  if (!opts.olderThan && !after) return result;
  const olderThan = opts.olderThan ?? new Date(now.getTime() - after);
  // One account's failure never stops the others; what is left is tried again on the next run.
  for (const instance of await instancesProvisioningSince(olderThan)) {
    try {
      if (await takeOverLaunch(instance, now, opts.workersDeadBefore)) result.launchesTakenOver += 1;
    } catch (err) {
      logger().error('re-driving a stranded launch failed', { userId: instance.userId, error: err as Error });
    }
  }
  for (const ref of await agentsPendingSince(olderThan)) {
    try {
      const outcome = await redriveAgent(ref, now, opts.workersDeadBefore);
      if (outcome === 'requeued') result.agentsRequeued += 1;
      if (outcome === 'settled') result.agentsSettled += 1;
    } catch (err) {
      logger().error('re-driving a stranded agent failed', { userId: ref.userId, agentId: ref.agentId, error: err as Error });
    }
  }
  return result;
}
