import type * as z from 'zod/mini';
import type { AgentConfig } from '#contract/agents';
import { AGENT_EXPORT_FORMAT, AGENT_EXPORT_MAX_HISTORY, AGENT_EXPORT_VERSION, type AgentExport } from '#contract/autonomy';
import { listAgentCredentials } from '#data/agent-credentials';
import { getAgent, listMessages } from '#data/agents';
import { listInstalledSkills } from '#data/installed-skills';
import { readAgentMemory } from '#data/memory';
import { listSchedules } from '#data/schedules';
import { notFound } from '#platform/errors';

/**
 * One picture of an agent, shared by the export and the checkpoints: name, model, configuration,
 * memory, installed skills with their settings, schedules and (when asked) the newest messages.
 * Never a secret value: the agent's `env` values, its credentials and the skill settings whose
 * names say they hold a secret are replaced by their names under `secrets`.
 */

export type AgentSnapshot = z.infer<ReturnType<typeof AgentExport>>;

/** Setting names that hold a secret, whatever the skill: their values never leave the platform. */
const SECRET_NAME = /(secret|token|password|passwd|credential|api[-_]?key|private[-_]?key|access[-_]?key|^key$|auth)/i;

export const isSecretSetting = (field: string) => SECRET_NAME.test(field);

function redactSettings(skillId: string, config: Record<string, unknown>, found: { skillId: string; field: string }[]) {
  return Object.fromEntries(
    Object.entries(config).filter(([field]) => {
      if (!isSecretSetting(field)) return true;
      found.push({ skillId, field });
      return false;
    }),
  );
}

/** The agent as it is now, or 404 when it is not the caller's. */
export async function agentSnapshot(userId: string, agentId: string, withHistory: boolean): Promise<AgentSnapshot> {
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
  } as AgentSnapshot;
}
