import { deliverKeptMessages } from '#domain/chat/wake-delivery';
import { setTimeout as sleep } from 'node:timers/promises';
import { isHealthy, launcher, LaunchError, runtimeRequest, RuntimeUnreachableError, type Launcher, type LaunchHandle } from '#adapters/launcher';
import type { ProvisioningMessage } from '#adapters/provisioning-queue';
import { getSubscription } from '#domain/billing/entitlements';
import { instanceMemoryMiB } from '#domain/billing/plans';
import { instanceConfig } from '#platform/config';
import { appendRuntimeLogLines } from '#data/agent-log';
import { failAgent, getAgent } from '#data/agents';
import {
  ensureInstance,
  gatewayToken,
  getInstance,
  IllegalTransitionError,
  recordLaunchAttemptError,
  recordOnGeneration,
  settleLaunch,
  settlePendingAgents,
  transitionInstance,
  type InstanceRecord,
} from '#data/instances';
import { startDefaultHeartbeat } from '#data/heartbeat';
import { recordLifecycleEvent } from '#data/lifecycle-events';
import { agentJobId } from '#data/provision-jobs';
import { logger } from '#http/logger';
import { emitMetrics, PLATFORM_METRICS } from '#platform/metrics';
import { mailLaunchFailure } from '#domain/lifecycle/failure-notice';

type AgentMessage = Extract<ProvisioningMessage, { kind: 'agent' }>;
type LifecycleMessage = Extract<ProvisioningMessage, { kind: 'lifecycle' }>;
type LaunchMessage = AgentMessage | LifecycleMessage;

export const jobIdOf = (m: LaunchMessage) => (m.kind === 'agent' ? agentJobId(m.agentId) : `gen-${m.generation}`);

type Health = { ok: true; handle: LaunchHandle } | { ok: false; reason: string; superseded?: true };

/**
 * Polls the launched instance until it answers /health, within the configured attempts. Each
 * attempt first checks that its generation is still current: a newer operation (a stop or restart
 * sent while this launch was in flight) supersedes it, and this job stops instead of waiting on.
 */
async function waitHealthy(l: Launcher, handle: LaunchHandle, token: string, userId: string, generation: number): Promise<Health> {
  const { attempts, intervalMs } = instanceConfig().provisionHealth;
  let current = handle;
  for (let i = 1; i <= attempts; i += 1) {
    if ((await getInstance(userId, true))?.generation !== generation) return { ok: false, reason: 'superseded', superseded: true };
    const located = await l.locate(current);
    current = located.handle;
    if (located.state === 'stopped') return { ok: false, reason: `the instance stopped before it was healthy${located.reason ? `: ${located.reason}` : ''}` };
    if (located.state === 'running' && current.endpoint && (await isHealthy(current.endpoint, token))) return { ok: true, handle: current };
    if (i < attempts) await sleep(intervalMs);
  }
  return { ok: false, reason: `the instance did not answer its health check after ${attempts} attempts` };
}

/** Launches `image` for the instance's current generation and waits for it; stops it when it never gets healthy. */
async function launchAndWait(instance: InstanceRecord, image: string, runtimeVersion: string, keySuffix = '') {
  const l = await launcher();
  const token = await gatewayToken(instance.userId);
  const previous = instance.handle;
  if (previous && previous.generation !== instance.generation) await l.stop(previous, `replaced by generation ${instance.generation}`);
  const handle = await l.launch({
    userId: instance.userId,
    idempotencyKey: `${instance.userId}#${instance.generation}${keySuffix}`,
    generation: instance.generation,
    image,
    runtimeVersion,
    gatewayToken: token,
    platformUrl: instanceConfig().runtimePlatformUrl,
    keepLogLines: (lines) => appendRuntimeLogLines(instance.userId, lines),
    // Read at every launch, so a plan change applies from the next start, restart or update.
    memoryMiB: instanceMemoryMiB((await getSubscription(instance.userId))?.plan),
  });
  emitMetrics({ [PLATFORM_METRICS.launches]: 1 });
  const recorded = { ...handle, generation: instance.generation };
  if (!(await recordOnGeneration(instance.userId, instance.generation, { handle: recorded }))) {
    // A newer transition (a stop, say) won while this launch ran: the new process is not wanted.
    await l.stop(recorded, 'superseded');
    return { superseded: true as const };
  }
  const health = await waitHealthy(l, recorded, token, instance.userId, instance.generation);
  if (!health.ok) await l.stop(recorded, health.superseded ? 'superseded' : 'never healthy');
  if (!health.ok && health.superseded) return { superseded: true as const };
  return { superseded: false as const, health };
}

/**
 * Runs the launch of the instance's current generation (the caller owns it): healthy → `running`,
 * the waiting agents joining in the same write; never healthy → for an update, one relaunch of the
 * previous image, else `error`. Then the agents still waiting follow (they fail with the launch, or
 * join an instance stopped meanwhile). Launcher failures (capacity...) are thrown for a retry.
 */
export async function runLaunch(instance: InstanceRecord): Promise<void> {
  const { userId, generation } = instance;
  const about = { cause: 'provisioner' as const, op: instance.op, operationId: instance.operationId, generation };
  await recordLifecycleEvent(userId, {
    ...about,
    type: 'instance.launching',
    status: 'provisioning',
    image: instance.image,
    runtimeVersion: instance.runtimeVersion,
  });
  let attempt = await launchAndWait(instance, instance.image, instance.runtimeVersion);
  if (attempt.superseded) return;
  let rolledBack = false;
  if (!attempt.health.ok && instance.op === 'update' && instance.previousImage) {
    logger().warn('update never became healthy; rolling back', { userId, generation, image: instance.image });
    const back = { image: instance.previousImage, runtimeVersion: instance.previousRuntimeVersion ?? instance.runtimeVersion };
    if (
      !(await recordOnGeneration(userId, generation, { ...back, rolledBack: true, failedImage: instance.image }, ['previousImage', 'previousRuntimeVersion']))
    )
      return;
    await recordLifecycleEvent(userId, { ...about, type: 'instance.rolled_back', status: 'provisioning', reason: attempt.health.reason, ...back });
    const current = await getInstance(userId, true);
    if (!current || current.generation !== generation) return;
    attempt = await launchAndWait(current, back.image, back.runtimeVersion, '#rollback');
    if (attempt.superseded) return;
    rolledBack = true;
  }
  if (attempt.health.ok) {
    await settleLaunch(userId, generation, {
      status: 'running',
      set: { handle: { ...attempt.health.handle, generation }, ...(rolledBack ? { rolledBack: true } : {}) },
    });
    await startDefaultHeartbeat(userId);
    logger().info('instance running', { userId, generation, rolledBack });
    // Messages kept while a wake launched this instance go now; the minute sweep takes what fails here.
    await deliverKeptMessages(userId).catch((err: unknown) =>
      logger().warn('kept messages not delivered at launch', { userId, error: (err as Error).message }),
    );
    emitMetrics({ [PLATFORM_METRICS.provisionsSucceeded]: 1 });
  } else {
    if (await settleLaunch(userId, generation, { status: 'error', reason: attempt.health.reason, failWaiting: true }))
      await mailLaunchFailure(userId, generation, attempt.health.reason);
    logger().warn('instance never became healthy', { userId, generation, reason: attempt.health.reason });
    emitMetrics({ [PLATFORM_METRICS.provisionsFailed]: 1 });
  }
  await settlePendingAgents(userId);
}

/**
 * An agent provisioned while the instance runs: the runtime reloads (it also fetches unknown
 * agents on first use) and the agent joins once the instance answers. A dead process is marked
 * `error`, so the next pass relaunches it.
 */
async function joinRunning(instance: InstanceRecord): Promise<'joined' | 'crashed'> {
  const l = await launcher();
  const handle = instance.handle;
  const located = handle ? await l.locate(handle) : undefined;
  if (!handle || located?.state === 'stopped') {
    await settleLaunch(instance.userId, instance.generation, { status: 'error', reason: 'the instance process is gone' });
    return 'crashed';
  }
  const endpoint = located?.handle.endpoint;
  if (!endpoint) throw new LaunchError('the running instance has no endpoint yet');
  const token = await gatewayToken(instance.userId);
  try {
    await runtimeRequest(endpoint, token, '/reload', { method: 'POST', timeoutMs: 10_000 });
  } catch (err) {
    if (!(err instanceof RuntimeUnreachableError)) throw err;
  }
  if (!(await isHealthy(endpoint, token))) throw new LaunchError('the running instance does not answer its health check');
  await settlePendingAgents(instance.userId);
  return 'joined';
}

const MAX_PASSES = 4;

export async function runAgentJob(message: AgentMessage, jobId: string): Promise<void> {
  const { userId, agentId } = message;
  const agent = await getAgent(userId, agentId, true);
  if (agent?.phase !== 'provisioning') return;
  let { instance } = await ensureInstance(userId, {
    ownerEmail: message.ownerEmail,
    image: instanceConfig().runtimeImage,
    runtimeVersion: instanceConfig().runtimeVersion,
    jobOwner: jobId,
  });
  for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
    if (instance.status === 'provisioning') {
      // Another job's launch settles every waiting agent, this one included.
      if (instance.jobOwner === jobId) await runLaunch(instance);
      return;
    }
    if (instance.status === 'running') {
      if ((await joinRunning(instance)) === 'joined') return;
    } else {
      try {
        instance = (await transitionInstance(userId, 'launch', { jobOwner: () => jobId })).after;
        continue;
      } catch (err) {
        if (!(err instanceof IllegalTransitionError)) throw err;
      }
    }
    instance = (await getInstance(userId, true))!;
  }
  throw new LaunchError('the instance kept changing state; retrying');
}

export async function runLifecycleJob(message: LifecycleMessage, jobId: string): Promise<void> {
  const instance = await getInstance(message.userId, true);
  if (!instance || instance.generation !== message.generation) return;
  if (message.op === 'stop') {
    if (instance.status === 'stopped' && instance.handle) {
      await (await launcher()).stop(instance.handle, 'stopped by the owner');
      await recordOnGeneration(message.userId, message.generation, {}, ['handle']);
    }
    return;
  }
  if (instance.status === 'provisioning' && instance.jobOwner === jobId) await runLaunch(instance);
}

/**
 * The dead-letter side: every delivery of this work failed. A pending agent fails (quota back);
 * a launch that never completed leaves the instance in `error`, failing the agents waiting for it.
 */
export async function giveUp(message: LaunchMessage): Promise<void> {
  const jobId = jobIdOf(message);
  const instance = await getInstance(message.userId, true);
  const reason = instance?.lastLaunchAttemptError
    ? `the launch failed on every attempt; last error: ${instance.lastLaunchAttemptError}`
    : 'the launch failed on every attempt';
  if (instance?.status === 'provisioning' && instance.jobOwner === jobId) {
    if (instance.handle?.generation === instance.generation) await (await launcher()).stop(instance.handle, 'launch given up');
    const settled = await settleLaunch(message.userId, instance.generation, { status: 'error', reason, failWaiting: true }, new Date(), 'dead-letter');
    if (settled) {
      emitMetrics({ [PLATFORM_METRICS.provisionsFailed]: 1 });
      await mailLaunchFailure(message.userId, instance.generation, reason);
    }
  }
  if (message.kind === 'agent' && (await failAgent(message.userId, message.agentId, reason))) {
    await recordLifecycleEvent(message.userId, { type: 'agent.error', cause: 'dead-letter', agentId: message.agentId, status: 'error', reason });
  }
  await settlePendingAgents(message.userId, reason);
}

/**
 * A delivery of launch work threw (and SQS will redeliver it): keep what went wrong on the launch
 * it owns, so the owner eventually reads the real cause. Only launcher errors are worded for
 * users; anything else is a fault of ours, described without internals.
 */
export async function noteLaunchAttemptError(message: LaunchMessage, err: unknown): Promise<void> {
  const instance = await getInstance(message.userId, true);
  if (instance?.status !== 'provisioning' || instance.jobOwner !== jobIdOf(message)) return;
  const what = err instanceof LaunchError ? err.message : 'an internal error of the platform (the operator has the details in its logs)';
  await recordLaunchAttemptError(message.userId, instance.generation, what);
}
