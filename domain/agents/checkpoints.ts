import { checkpointObjectKeyOf, fileStorage } from '#adapters/file-storage';
import type { AgentConfig } from '#contract/agents';
import { AUTO_CHECKPOINT_KEEP_DAYS, AUTO_CHECKPOINTS_PER_AGENT, type CHECKPOINT_REASONS } from '#contract/autonomy';
import { MEMORY_BULK_MAX_KEYS, MEMORY_BULK_MAX_TOTAL_BYTES } from '#contract/memory';
import { getAgent, replaceAgentConfig, restoreHistoryReset } from '#data/agents';
import {
  type CheckpointKind,
  type CheckpointRecord,
  deleteCheckpointRecord,
  getCheckpoint,
  listCheckpoints,
  newCheckpointId,
  putCheckpoint,
} from '#data/checkpoints';
import { listInstalledSkills, updateInstalledSkill } from '#data/installed-skills';
import { deleteAgentMemoryKeys, type MemoryEntry, readAgentMemory, writeAgentMemory } from '#data/memory';
import { limitReached, notFound } from '#platform/errors';
import { logger } from '#platform/logger';
import { encodeEntry } from '#domain/memory/limits';
import { pushToRunningInstance } from '#domain/instances/push';
import { agentSnapshot, type AgentSnapshot, isSecretSetting } from './snapshot';

/**
 * Checkpoints of an agent: its snapshot (domain/agents/snapshot.ts, never a secret value) kept in
 * file storage with a small record in the table (data/checkpoints.ts). Named ones are the owner's,
 * counted and sized by the plan; automatic ones are taken before a change that loses state and
 * expire by themselves. A rewind puts memory and configuration back exactly; a clone is an import
 * of the snapshot (functions/http/agent-autonomy/checkpoints.ts).
 */

export type CheckpointReason = (typeof CHECKPOINT_REASONS)[number];

/**
 * What a checkpoint's object holds: the snapshot, and the agent state a rewind needs that an
 * export does not carry (where the replayed conversation started).
 */
interface StoredCheckpoint {
  snapshot: AgentSnapshot;
  historyResetAt?: string;
}

/** The largest snapshot an automatic checkpoint keeps: the largest plan's size; a bigger agent is not checkpointed automatically. */
export const AUTO_CHECKPOINT_MAX_BYTES = 5 * 1024 * 1024;

const DAY_MS = 86_400_000;

export type CheckpointRequest = { kind: 'named'; name: string; limit: number; maxBytes: number } | { kind: 'auto'; reason: CheckpointReason };

/** Takes a checkpoint of an owned agent (404 when it is not the caller's); plan limits answer 429 with `current` and `limit`. */
export async function takeCheckpoint(userId: string, agentId: string, request: CheckpointRequest, now = new Date()): Promise<CheckpointRecord> {
  const agent = await getAgent(userId, agentId, true);
  if (!agent) throw notFound('agent not found');
  const stored: StoredCheckpoint = {
    snapshot: await agentSnapshot(userId, agentId, true),
    ...(typeof agent.historyResetAt === 'string' ? { historyResetAt: agent.historyResetAt } : {}),
  };
  const bytes = Buffer.from(JSON.stringify(stored), 'utf8');
  const maxBytes = request.kind === 'named' ? request.maxBytes : AUTO_CHECKPOINT_MAX_BYTES;
  if (bytes.length > maxBytes) {
    throw limitReached(`this agent's snapshot is ${bytes.length} bytes; a checkpoint holds at most ${maxBytes}`, 'CHECKPOINT_TOO_LARGE', {
      current: bytes.length,
      limit: maxBytes,
    });
  }
  const id = newCheckpointId();
  const kind: CheckpointKind = request.kind;
  const record: CheckpointRecord = {
    id,
    agentId,
    kind,
    name: request.kind === 'named' ? request.name : `Before ${request.reason}`,
    ...(request.kind === 'auto' ? { reason: request.reason, expiresAtIso: new Date(now.getTime() + AUTO_CHECKPOINT_KEEP_DAYS * DAY_MS).toISOString() } : {}),
    createdAt: now.toISOString(),
    sizeBytes: bytes.length,
    objectKey: checkpointObjectKeyOf(userId, id, kind),
    contents: {
      memoryKeys: Object.keys(stored.snapshot.memory).length,
      skills: stored.snapshot.skills.length,
      schedules: stored.snapshot.schedules.length,
      messages: stored.snapshot.history?.length ?? 0,
    },
  };
  const storage = fileStorage();
  await storage.put(record.objectKey, bytes, 'application/json');
  let saved: CheckpointRecord | undefined;
  try {
    saved = await putCheckpoint(userId, record, request.kind === 'named' ? request.limit : 0);
  } catch (err) {
    await storage.delete(record.objectKey);
    throw err;
  }
  if (!saved) {
    await storage.delete(record.objectKey);
    throw notFound('agent not found');
  }
  if (kind === 'auto') await pruneAutoCheckpoints(userId, agentId, now);
  return saved;
}

/**
 * An automatic checkpoint before a change that loses state. An agent too large for one is changed
 * without it (logged) rather than refused: the change is what the owner asked for.
 */
export async function autoCheckpoint(userId: string, agentId: string, reason: CheckpointReason): Promise<CheckpointRecord | undefined> {
  try {
    return await takeCheckpoint(userId, agentId, { kind: 'auto', reason });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'CHECKPOINT_TOO_LARGE' && code !== 'NOT_FOUND') throw err;
    logger().warn('no automatic checkpoint', { agentId, reason, code });
    return undefined;
  }
}

/** The newest automatic checkpoints are kept, up to the per-agent bound. */
async function pruneAutoCheckpoints(userId: string, agentId: string, now: Date) {
  const autos = (await listCheckpoints(userId, agentId, now)).filter((c) => c.kind === 'auto');
  for (const old of autos.slice(AUTO_CHECKPOINTS_PER_AGENT)) await removeCheckpoint(userId, agentId, old.id);
}

/** A checkpoint as the API shows it: where its snapshot is kept stays inside. */
export const checkpointView = ({ objectKey: _where, expiresAtIso, ...rest }: CheckpointRecord) => ({
  ...rest,
  ...(expiresAtIso ? { expiresAt: expiresAtIso } : {}),
});

export const checkpointsOf = (userId: string, agentId: string) => listCheckpoints(userId, agentId);

export async function ownCheckpoint(userId: string, agentId: string, checkpointId: string): Promise<CheckpointRecord> {
  const record = await getCheckpoint(userId, agentId, checkpointId);
  if (!record) throw notFound('checkpoint not found');
  return record;
}

/** A checkpoint's record and its snapshot; 404 when either is gone. */
export async function openCheckpoint(userId: string, agentId: string, checkpointId: string): Promise<{ record: CheckpointRecord; stored: StoredCheckpoint }> {
  const record = await ownCheckpoint(userId, agentId, checkpointId);
  const bytes = await fileStorage().get(record.objectKey);
  if (!bytes) throw notFound('checkpoint not found');
  return { record, stored: JSON.parse(bytes.toString('utf8')) as StoredCheckpoint };
}

/** Deletes a checkpoint's record, then its snapshot; false when there was none. */
export async function removeCheckpoint(userId: string, agentId: string, checkpointId: string): Promise<boolean> {
  const removed = await deleteCheckpointRecord(userId, agentId, checkpointId);
  if (!removed) return false;
  await fileStorage().delete(removed.objectKey);
  return true;
}

/** Memory writes in pieces one memory transaction takes: by key count and by encoded size. */
function memoryChunks(entries: MemoryEntry[]): MemoryEntry[][] {
  const chunks: MemoryEntry[][] = [];
  let current: MemoryEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (current.length && (current.length === MEMORY_BULK_MAX_KEYS || bytes + entry.bytes > MEMORY_BULK_MAX_TOTAL_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

/** The secret settings of a skill as installed now: a checkpoint never held them, so a rewind keeps them. */
const secretSettingsOf = (config: Record<string, unknown>) => Object.fromEntries(Object.entries(config).filter(([field]) => isSecretSetting(field)));

/**
 * Puts an owned agent back to a checkpoint in place: memory exactly as it was (its keys written
 * first, then the keys written since removed, so the agent never sees an empty memory), the
 * configuration exactly as it was with the current values of the `env` names it lists, the
 * settings of the skills still installed, and where the replayed conversation started. Then the
 * running instance reloads the agent from the stored state.
 */
export async function rewindToCheckpoint(userId: string, agentId: string, checkpointId: string) {
  const { record, stored } = await openCheckpoint(userId, agentId, checkpointId);
  const agent = await getAgent(userId, agentId, true);
  if (!agent) throw notFound('agent not found');
  const undo = await autoCheckpoint(userId, agentId, 'rewind');
  const { snapshot } = stored;

  const entries = Object.entries(snapshot.memory).map(([key, value]) => encodeEntry(key, value));
  for (const chunk of memoryChunks(entries)) await writeAgentMemory(userId, agentId, chunk);
  const kept = new Set(Object.keys(snapshot.memory));
  const since = Object.keys((await readAgentMemory(userId, agentId))?.memory ?? {}).filter((key) => !kept.has(key));
  await deleteAgentMemoryKeys(userId, agentId, since);

  const currentEnv = ((agent.config ?? {}) as AgentConfig).env ?? {};
  const env = Object.fromEntries(snapshot.secrets.env.filter((name) => Object.hasOwn(currentEnv, name)).map((name) => [name, currentEnv[name]]));
  const config = { ...snapshot.agent.config, ...(Object.keys(env).length ? { env } : {}) } as AgentConfig;
  if (!(await replaceAgentConfig(userId, agentId, config))) throw notFound('agent not found');

  const installed = new Map((await listInstalledSkills(userId, agentId, true)).map((s) => [s.skillId, s]));
  let skills = 0;
  for (const skill of snapshot.skills) {
    const now = installed.get(skill.skillId);
    if (!now) continue;
    await updateInstalledSkill(userId, agentId, skill.skillId, { enabled: skill.enabled, config: { ...skill.config, ...secretSettingsOf(now.config) } });
    skills += 1;
  }
  await restoreHistoryReset(userId, agentId, stored.historyResetAt);

  const instanceTold = await pushToRunningInstance(userId, '/reload', {});
  return {
    success: true as const,
    checkpoint: checkpointView(record),
    restored: { memoryKeys: entries.length, memoryKeysRemoved: since.length, skills },
    ...(undo ? { undoCheckpointId: undo.id } : {}),
    instanceTold,
  };
}
