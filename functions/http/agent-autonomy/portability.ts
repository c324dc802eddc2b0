import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { AgentConfig } from '#contract/agents';
import { AGENT_EXPORT_VERSION, AgentExport } from '#contract/autonomy';
import { SKILL_CATALOGUE } from '#contract/skills';
import { installSkill, updateInstalledSkill } from '#data/installed-skills';
import { writeAgentMemory } from '#data/memory';
import { invalid, limitReached } from '#platform/errors';
import { encodeEntry } from '#domain/memory/limits';
import { provisionFor } from '#domain/agents/provision';
import { agentSnapshot, type AgentSnapshot } from '#domain/agents/snapshot';
import { addSchedule, firstRunAt } from './schedules';

/**
 * Agent export and import. An export is the agent's snapshot (domain/agents/snapshot.ts: never a
 * secret value). An import is checked whole before anything is written, then the agent is
 * provisioned through the one provisioning path (plan agent limit in its transaction).
 */

/** Memory is written in pieces the memory transaction takes (at most 50 keys). */
const MEMORY_CHUNK = 50;

export const exportAgent = agentSnapshot;

/** The version first, so a document from a newer platform is named as such rather than failing on fields this one does not know. */
function parseDocument(body: unknown): AgentSnapshot {
  const version = (body as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === 'number' && version > AGENT_EXPORT_VERSION) {
    throw invalid(`this export has format version ${version}; this platform reads up to version ${AGENT_EXPORT_VERSION}`, 'EXPORT_VERSION_UNSUPPORTED', {
      supportedVersion: AGENT_EXPORT_VERSION,
    });
  }
  // A parsed body holds `__proto__` as its own key, but the schema's copy of the object drops it
  // (it would be the copy's prototype): refused here rather than lost without a word.
  const memory = (body as { memory?: unknown } | null)?.memory;
  if (memory && typeof memory === 'object' && Object.hasOwn(memory, '__proto__')) {
    throw invalid('this is not a valid agent export', 'INVALID_EXPORT', {
      issues: [{ path: 'memory.__proto__', message: 'a memory key must not be __proto__' }],
    });
  }
  const parsed = AgentExport().safeParse(body);
  if (!parsed.success) {
    throw invalid('this is not a valid agent export', 'INVALID_EXPORT', {
      issues: parsed.error.issues.slice(0, 20).map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

export const importAgent = (auth: AuthContext, body: unknown) => agentFromSnapshot(auth, parseDocument(body));

/** A new agent in the caller's account from a snapshot (an import, a checkpoint's clone), within the plan's limits. */
export async function agentFromSnapshot(auth: AuthContext, doc: AgentSnapshot) {
  const access = await accountAccess(auth);
  requireActiveSubscription(access);
  const limits = access.limits;
  const unknownSkill = doc.skills.find((s) => !SKILL_CATALOGUE.some((c) => c.name === s.skillId));
  if (unknownSkill) throw invalid(`no skill ${unknownSkill.skillId} in the catalogue`, 'UNKNOWN_SKILL', { skillId: unknownSkill.skillId });
  const skillLimit = limits?.skills ?? 0;
  if (doc.skills.length > skillLimit)
    throw limitReached(`skill limit reached: the plan allows ${skillLimit} skills per agent`, 'SKILL_LIMIT_REACHED', {
      current: doc.skills.length,
      limit: skillLimit,
    });
  // A one-time schedule whose time has passed has had its run: it is not brought back.
  const now = Date.now();
  const schedules = doc.schedules.filter((s) => s.status !== 'done' && (s.cron ? !s.at : s.at && new Date(s.at).getTime() > now));
  for (const s of schedules) await firstRunAt(s);
  if (schedules.length > (limits?.schedules ?? 0))
    throw limitReached(`schedule limit reached: the account's plan allows ${limits?.schedules ?? 0}`, 'SCHEDULE_LIMIT_REACHED', {
      limit: limits?.schedules ?? 0,
    });
  const configCheck = AgentConfig().safeParse(doc.agent.config);
  if (!configCheck.success) throw invalid('the agent configuration in this export is not valid', 'INVALID_EXPORT');
  const entries = Object.entries(doc.memory).map(([key, value]) => encodeEntry(key, value));

  const agent = await provisionFor(auth, access.agentLimit, { name: doc.agent.name, model: doc.agent.model, config: configCheck.data, source: 'api' });
  let memoryKeys = 0;
  for (let i = 0; i < entries.length; i += MEMORY_CHUNK) {
    const chunk = entries.slice(i, i + MEMORY_CHUNK);
    await writeAgentMemory(auth.userId, agent.id, chunk);
    memoryKeys += chunk.length;
  }
  for (const skill of doc.skills) {
    await installSkill(auth.userId, agent.id, skill.skillId, skillLimit);
    await updateInstalledSkill(auth.userId, agent.id, skill.skillId, { enabled: skill.enabled, config: skill.config as Record<string, unknown> });
  }
  for (const s of schedules) await addSchedule(auth, agent.id, { cron: s.cron, at: s.at, prompt: s.prompt, status: s.status });
  return {
    success: true as const,
    agent: { id: agent.id, name: agent.name, model: agent.model, status: 'provisioning' as const, createdAt: agent.createdAt },
    imported: { memoryKeys, skills: doc.skills.length, schedules: schedules.length },
    secretsToEnter: doc.secrets,
  };
}
