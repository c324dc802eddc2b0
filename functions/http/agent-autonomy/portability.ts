import type * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { AgentConfig } from '#contract/agents';
import { AGENT_EXPORT_FORMAT, AGENT_EXPORT_MAX_HISTORY, AGENT_EXPORT_VERSION, AgentExport } from '#contract/autonomy';
import { SKILL_CATALOGUE } from '#contract/skills';
import { listAgentCredentials } from '#data/agent-credentials';
import { getAgent, listMessages } from '#data/agents';
import { installSkill, listInstalledSkills, updateInstalledSkill } from '#data/installed-skills';
import { readAgentMemory, writeAgentMemory } from '#data/memory';
import { listSchedules } from '#data/schedules';
import { invalid, limitReached, notFound } from '#platform/errors';
import { encodeEntry } from '#domain/memory/limits';
import { provisionFor } from '#domain/agents/provision';
import { addSchedule, firstRunAt } from './schedules';

/**
 * Agent export and import. An export never holds a secret value: the agent's `env`
 * values, its credentials and the skill settings whose names say they hold a secret are replaced
 * by their names under `secrets`. An import is checked whole before anything is written, then the
 * agent is provisioned through the one provisioning path (plan agent limit in its transaction).
 */

type ExportDocument = z.infer<ReturnType<typeof AgentExport>>;

/** Setting names that hold a secret, whatever the skill: their values never leave the platform. */
const SECRET_NAME = /(secret|token|password|passwd|credential|api[-_]?key|private[-_]?key|access[-_]?key|^key$|auth)/i;

/** Memory is written in pieces the memory transaction takes (at most 50 keys). */
const MEMORY_CHUNK = 50;

function redactSettings(skillId: string, config: Record<string, unknown>, found: { skillId: string; field: string }[]) {
  return Object.fromEntries(
    Object.entries(config).filter(([field]) => {
      if (!SECRET_NAME.test(field)) return true;
      found.push({ skillId, field });
      return false;
    }),
  );
}

export async function exportAgent(userId: string, agentId: string, withHistory: boolean): Promise<ExportDocument> {
  const agent = await getAgent(userId, agentId, true);
  if (!agent) throw notFound('no such agent');
  const [memory, skills, schedules, credentials, history] = await Promise.all([
    readAgentMemory(userId, agentId),
    listInstalledSkills(userId, agentId, true),
    listSchedules(userId, agentId),
    listAgentCredentials(userId, agentId),
    withHistory ? listMessages(userId, agentId, AGENT_EXPORT_MAX_HISTORY, 0) : Promise.resolve(undefined),
  ]);
  const { env, ...config } = (agent.config ?? {}) as AgentConfig;
  const skillSettings: { skillId: string; field: string }[] = [];
  return {
    format: AGENT_EXPORT_FORMAT,
    formatVersion: AGENT_EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    agent: { name: agent.name, model: agent.model, config: config as Record<string, z.core.util.JSONType> },
    memory: (memory?.memory ?? {}) as Record<string, z.core.util.JSONType>,
    skills: skills.map((s) => ({
      skillId: s.skillId,
      enabled: s.enabled,
      config: redactSettings(s.skillId, s.config, skillSettings) as Record<string, z.core.util.JSONType>,
    })),
    schedules: schedules.map((s) => ({ ...(s.cron ? { cron: s.cron } : {}), ...(s.at ? { at: s.at } : {}), prompt: s.prompt, status: s.status })),
    secrets: { env: Object.keys(env ?? {}), credentials: credentials.map((c) => c.name), skillSettings },
    ...(history ? { history: history.reverse().map(({ role, content, createdAt }) => ({ role, content, createdAt })) } : {}),
  } as ExportDocument;
}

/** The version first, so a document from a newer platform is named as such rather than failing on fields this one does not know. */
function parseDocument(body: unknown): ExportDocument {
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

export async function importAgent(auth: AuthContext, body: unknown) {
  const doc = parseDocument(body);
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
