import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requirePlan } from '#domain/billing/entitlements';
import { AUTO_CHECKPOINT_KEEP_DAYS, AUTO_CHECKPOINTS_PER_AGENT } from '#contract/autonomy';
import { namedCheckpointCount } from '#data/checkpoints';
import { notFound } from '#platform/errors';
import { ownAgent } from '#domain/agents/read';
import { checkpointsOf, checkpointView, openCheckpoint, ownCheckpoint, removeCheckpoint, rewindToCheckpoint, takeCheckpoint } from '#domain/agents/checkpoints';
import { agentFromSnapshot } from './portability';

/** Checkpoint routes: every one reads the agent from the caller's partition first, so another account's agent is a 404. */

export async function listAgentCheckpoints(auth: AuthContext, agentId: string) {
  await ownAgent(auth, agentId);
  const [checkpoints, access, current] = await Promise.all([
    checkpointsOf(auth.userId, agentId),
    accountAccess(auth),
    namedCheckpointCount(auth.userId, agentId),
  ]);
  return {
    checkpoints: checkpoints.map(checkpointView),
    limits: {
      named: { current, limit: access.limits?.checkpoints ?? 0 },
      maxBytes: access.limits?.checkpointMaxBytes ?? 0,
      autoKeptDays: AUTO_CHECKPOINT_KEEP_DAYS,
      autoPerAgent: AUTO_CHECKPOINTS_PER_AGENT,
    },
  };
}

export async function createAgentCheckpoint(auth: AuthContext, agentId: string, name: string) {
  await ownAgent(auth, agentId);
  const limits = requirePlan(await accountAccess(auth));
  const record = await takeCheckpoint(auth.userId, agentId, { kind: 'named', name, limit: limits.checkpoints, maxBytes: limits.checkpointMaxBytes });
  return { checkpoint: checkpointView(record) };
}

export async function describeAgentCheckpoint(auth: AuthContext, agentId: string, checkpointId: string) {
  await ownAgent(auth, agentId);
  const { record, stored } = await openCheckpoint(auth.userId, agentId, checkpointId);
  const { agent, memory, skills, schedules, secrets } = stored.snapshot;
  return {
    checkpoint: checkpointView(record),
    snapshot: { agent, memoryKeys: Object.keys(memory), skills: skills.map(({ skillId, enabled }) => ({ skillId, enabled })), schedules, secrets },
  };
}

export async function deleteAgentCheckpoint(auth: AuthContext, agentId: string, checkpointId: string) {
  await ownAgent(auth, agentId);
  await ownCheckpoint(auth.userId, agentId, checkpointId);
  if (!(await removeCheckpoint(auth.userId, agentId, checkpointId))) throw notFound('checkpoint not found');
  return { success: true as const };
}

export async function rewindAgentCheckpoint(auth: AuthContext, agentId: string, checkpointId: string) {
  await ownAgent(auth, agentId);
  return rewindToCheckpoint(auth.userId, agentId, checkpointId);
}

/** A clone is an import of the checkpoint's snapshot: the same checks and the same plan limits. */
export async function cloneAgentCheckpoint(auth: AuthContext, agentId: string, checkpointId: string, name: string | undefined) {
  await ownAgent(auth, agentId);
  const { stored } = await openCheckpoint(auth.userId, agentId, checkpointId);
  const snapshot = stored.snapshot;
  const cloneName = name ?? `${snapshot.agent.name} (copy)`.slice(0, 100);
  return agentFromSnapshot(auth, { ...snapshot, agent: { ...snapshot.agent, name: cloneName } });
}
