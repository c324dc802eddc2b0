import type { UpdateInstanceBody } from '#contract/instance';
import type * as z from 'zod/mini';
import { requestProvisioning } from '#adapters/provisioning-queue';
import type { AuthContext } from '#domain/auth/authenticate';
import { instanceConfig } from '#platform/config';
import { agentMemoryPath, pushToRunningInstance } from '#domain/instances/push';
import { autoCheckpoint } from '#domain/agents/checkpoints';
import { listAgents, markHistoryReset } from '#data/agents';
import { getInstance, NoInstanceError, settleLaunch, transitionInstance, type InstanceOp, type InstanceRecord } from '#data/instances';
import { clearAgentMemory } from '#data/memory';
import { invalid, upstreamFailed } from '#platform/errors';
import { logger } from '#http/logger';
import { requireOwner } from './owner';

const backendUnavailable = () => upstreamFailed('the agent manager is unavailable; try again', 'BACKEND_UNAVAILABLE');

/** What every lifecycle answer adds to the spec's body: where the instance is now, and the operation that put it there. */
const progress = (instance: InstanceRecord) => ({ current: instance.status, operationId: instance.operationId ?? `op_generation_${instance.generation}` });

/**
 * One lifecycle transition (the state machine is in data/instances.ts and the contract), then
 * the work is queued for the provisioner, which owns every launch and stop. An operation that
 * finds the instance where it leads (a start while it starts or runs) writes and queues nothing.
 */
async function transition(auth: AuthContext, userId: string, op: InstanceOp, set?: (snap: InstanceRecord) => Record<string, unknown>): Promise<InstanceRecord> {
  requireOwner(auth, userId);
  const { after, changed } = await transitionInstance(auth.userId, op, { jobOwner: (g) => `gen-${g}`, set });
  if (!changed) return after;
  try {
    await requestProvisioning({ kind: 'lifecycle', userId: auth.userId, generation: after.generation, op });
  } catch (err) {
    logger().error('could not queue lifecycle work', { op, error: (err as Error).message });
    if (after.status === 'provisioning') await settleLaunch(auth.userId, after.generation, { status: 'error', reason: 'the launch could not be queued' });
    throw backendUnavailable();
  }
  return after;
}

export const start = async (auth: AuthContext, userId: string) => ({
  success: true as const,
  status: 'running' as const,
  ...progress(await transition(auth, userId, 'start')),
});

export const stop = async (auth: AuthContext, userId: string) => ({
  success: true as const,
  status: 'stopped' as const,
  ...progress(await transition(auth, userId, 'stop')),
});

export const restart = async (auth: AuthContext, userId: string) => ({
  success: true as const,
  status: 'running' as const,
  ...progress(await transition(auth, userId, 'restart')),
});

/** The image to fall back to: an update superseding another update that never ran keeps that one's fallback. */
const fallbackOf = (snap: InstanceRecord) =>
  snap.status === 'provisioning' && snap.op === 'update' && snap.previousImage
    ? { previousImage: snap.previousImage, previousRuntimeVersion: snap.previousRuntimeVersion ?? snap.runtimeVersion }
    : { previousImage: snap.image, previousRuntimeVersion: snap.runtimeVersion };

export async function update(auth: AuthContext, userId: string, body: z.infer<ReturnType<typeof UpdateInstanceBody>> | undefined) {
  requireOwner(auth, userId);
  const image = body?.image ?? instanceConfig().runtimeImage;
  if (!instanceConfig().approvedRuntimeImages.includes(image)) {
    throw invalid('this image is not one the operator has approved', 'IMAGE_NOT_ALLOWED', { approved: instanceConfig().approvedRuntimeImages });
  }
  const runtimeVersion = body?.runtimeVersion ?? instanceConfig().runtimeVersion;
  await checkpointEveryAgent(auth.userId, 'update');
  const after = await transition(auth, userId, 'update', (snap) => ({ image, runtimeVersion, ...fallbackOf(snap) }));
  return { success: true as const, status: 'running' as const, ...progress(after) };
}

/** Before a change that can lose state, each agent of the account gets an automatic checkpoint to go back to. */
async function checkpointEveryAgent(userId: string, reason: 'update' | 'reset-memory') {
  for (const agent of await listAgents(userId)) await autoCheckpoint(userId, agent.id, reason);
}

export async function repair(auth: AuthContext, userId: string) {
  const after = await transition(auth, userId, 'repair');
  return {
    success: true as const,
    message: 'the instance is being recreated on the same image; memory, skills and configuration are kept',
    status: 'provisioning' as const,
    ...progress(after),
  };
}

/**
 * Wipes the key-value memory of every agent of the account and stops replaying their conversation
 * so far into prompts (the messages stay readable); a running instance is told at once, and a
 * running or starting one also relaunches so nothing of the old state survives. Each agent's
 * automatic checkpoint taken first brings it all back.
 */
export async function resetMemory(auth: AuthContext, userId: string) {
  requireOwner(auth, userId);
  if (!(await getInstance(auth.userId, true))) throw new NoInstanceError();
  await checkpointEveryAgent(auth.userId, 'reset-memory');
  const agents = await listAgents(auth.userId);
  let keysCleared = 0;
  for (const agent of agents) {
    keysCleared += await clearAgentMemory(auth.userId, agent.id);
    await markHistoryReset(auth.userId, agent.id);
  }
  await Promise.all(agents.map((agent) => pushToRunningInstance(auth.userId, agentMemoryPath(agent.id), { replace: {}, clearHistory: true })));
  const summary = `memory cleared: ${keysCleared} key${keysCleared === 1 ? '' : 's'} across ${agents.length} agent${agents.length === 1 ? '' : 's'}`;
  const after = await transition(auth, userId, 'reset-memory');
  const restarting = after.status === 'provisioning';
  return { success: true as const, message: restarting ? `${summary}; the instance is restarting` : summary, status: after.status, ...progress(after) };
}
