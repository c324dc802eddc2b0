import type { UpdateInstanceBody } from '../../shared/contract/instance';
import type * as z from 'zod';
import { requestProvisioning } from '../../shared/adapters/launcher';
import type { AuthContext } from '../../shared/auth/authenticate';
import { config } from '../../shared/config';
import { listAgents } from '../../shared/db/agents';
import { getInstance, IllegalTransitionError, NoInstanceError, settleLaunch, transitionInstance, type InstanceOp, type InstanceRecord } from '../../shared/db/instances';
import { clearAgentMemory } from '../../shared/db/memory';
import { badRequest, conflict, HttpError, notFound } from '../../shared/http/errors';
import { logger } from '../../shared/http/logger';
import { requireOwner } from './owner';

const backendUnavailable = () => new HttpError(502, 'the agent manager is unavailable; try again', 'BACKEND_UNAVAILABLE');
const noInstance = () => notFound('this account has no instance yet: provision an agent first');
const illegal = (err: IllegalTransitionError) => conflict(err.message, 'INVALID_TRANSITION', { current: err.current });

/**
 * One lifecycle transition (the state machine is in shared/db/instances.ts and the contract),
 * then the work is queued for the provisioner, which owns every launch and stop.
 */
async function transition(auth: AuthContext, userId: string, op: InstanceOp, set?: (snap: InstanceRecord) => Record<string, unknown>): Promise<InstanceRecord> {
  requireOwner(auth, userId);
  let after: InstanceRecord;
  try {
    after = (await transitionInstance(auth.userId, op, { jobOwner: (g) => `gen-${g}`, set })).after;
  } catch (err) {
    if (err instanceof NoInstanceError) throw noInstance();
    if (err instanceof IllegalTransitionError) throw illegal(err);
    throw err;
  }
  try {
    await requestProvisioning({ kind: 'lifecycle', userId: auth.userId, generation: after.generation, op });
  } catch (err) {
    logger().error('could not queue lifecycle work', { op, error: (err as Error).message });
    if (after.status === 'provisioning') await settleLaunch(auth.userId, after.generation, { status: 'error', reason: 'the launch could not be queued' });
    throw backendUnavailable();
  }
  return after;
}

export const start = async (auth: AuthContext, userId: string) => {
  await transition(auth, userId, 'start');
  return { success: true as const, status: 'running' as const };
};

export const stop = async (auth: AuthContext, userId: string) => {
  await transition(auth, userId, 'stop');
  return { success: true as const, status: 'stopped' as const };
};

export const restart = async (auth: AuthContext, userId: string) => {
  await transition(auth, userId, 'restart');
  return { success: true as const, status: 'running' as const };
};

export async function update(auth: AuthContext, userId: string, body: z.infer<typeof UpdateInstanceBody> | undefined) {
  requireOwner(auth, userId);
  const image = body?.image ?? config().runtimeImage;
  if (!config().approvedRuntimeImages.includes(image)) {
    throw badRequest('this image is not one the operator has approved', 'IMAGE_NOT_ALLOWED', { approved: config().approvedRuntimeImages });
  }
  const runtimeVersion = body?.runtimeVersion ?? config().runtimeVersion;
  await transition(auth, userId, 'update', (snap) => ({
    image,
    runtimeVersion,
    previousImage: snap.image,
    previousRuntimeVersion: snap.runtimeVersion,
  }));
  return { success: true as const, status: 'running' as const };
}

export async function repair(auth: AuthContext, userId: string) {
  await transition(auth, userId, 'repair');
  return { success: true as const, message: 'the instance is being recreated on the same image; memory, skills and configuration are kept', status: 'provisioning' as const };
}

/** Wipes the key-value memory of every agent of the account; a running instance restarts to drop its copy. */
export async function resetMemory(auth: AuthContext, userId: string) {
  requireOwner(auth, userId);
  const instance = await getInstance(auth.userId, true);
  if (!instance) throw noInstance();
  if (instance.status === 'provisioning') throw illegal(new IllegalTransitionError('provisioning', 'reset-memory'));
  const agents = await listAgents(auth.userId);
  let keysCleared = 0;
  for (const agent of agents) keysCleared += await clearAgentMemory(auth.userId, agent.id);
  const summary = `memory cleared: ${keysCleared} key${keysCleared === 1 ? '' : 's'} across ${agents.length} agent${agents.length === 1 ? '' : 's'}`;
  if (instance.status !== 'running') return { success: true as const, message: summary, status: instance.status };
  try {
    await transition(auth, userId, 'reset-memory');
  } catch (err) {
    // The memory is gone either way; a concurrent transition already relaunches (or stopped) the instance.
    if (!(err instanceof HttpError) || err.status !== 409) throw err;
    const now = await getInstance(auth.userId, true);
    return { success: true as const, message: summary, status: now?.status ?? instance.status };
  }
  return { success: true as const, message: `${summary}; the instance is restarting`, status: 'provisioning' as const };
}
