import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Skills installed on an agent, at `USER#<id> / SKILL#<agentId>#<skillId>`. The plan's skill limit
 * counts per agent: `SKILLQUOTA#<agentId>` holds how many skills the agent has, changed in the same
 * transaction as each install and uninstall, so concurrent installs can never pass the limit.
 * Each new install also adds one to the catalogue skill's `downloads`.
 */
export interface InstalledSkill {
  skillId: string;
  agentId: string;
  enabled: boolean;
  /** The skill's settings on this agent (set through the AI layer's update-skill). */
  config: Record<string, unknown>;
  installedAt: string;
  updatedAt: string;
}

export class SkillLimitError extends DomainError {
  constructor(
    readonly current: number,
    readonly limit: number,
  ) {
    super('limitReached', `skill limit reached: the plan allows ${limit} skills per agent`, 'SKILL_LIMIT_REACHED', { current, limit });
  }
}

export class AgentNotFoundError extends DomainError {
  constructor() {
    super('notFound', 'no such agent', 'NOT_FOUND');
  }
}

const QUOTA_ATTEMPTS = 25;
const COUNT = { '#count': 'count' };

export async function getInstalledSkill(userId: string, agentId: string, skillId: string, consistent = false): Promise<InstalledSkill | undefined> {
  const item = await tenant(userId).get<InstalledSkill & Record<string, unknown>>(keys.installedSkill(userId, agentId, skillId), consistent);
  return item && view(item);
}

const view = (item: InstalledSkill): InstalledSkill => ({
  skillId: item.skillId,
  agentId: item.agentId,
  enabled: item.enabled !== false,
  config: item.config ?? {},
  installedAt: item.installedAt,
  updatedAt: item.updatedAt,
});

/** The skills installed on one agent, or on all the account's agents without `agentId`. */
export async function listInstalledSkills(userId: string, agentId?: string, consistent = false): Promise<InstalledSkill[]> {
  const prefix = agentId ? `${keys.installedSkillPrefix}${agentId}#` : keys.installedSkillPrefix;
  const items = await tenant(userId).queryAll<InstalledSkill & Record<string, unknown>>(prefix, { consistent });
  return items.map(view);
}

/** The skills installed on one agent as stored, every attribute but the key (the agent plugin's tool shows them whole). */
export async function installedSkillRecords(userId: string, agentId: string): Promise<Record<string, unknown>[]> {
  const items = await tenant(userId).queryAll<Record<string, unknown>>(`${keys.installedSkillPrefix}${agentId}#`);
  return items.map(({ pk: _pk, sk: _sk, ...skill }) => skill);
}

export async function skillQuotaUsed(userId: string, agentId: string): Promise<number> {
  const item = await tenant(userId).get<{ count?: number }>(keys.skillQuota(userId, agentId), true);
  return Number(item?.count ?? 0);
}

/**
 * Installs a skill on an owned agent within `limit`. Installing a skill the agent already has
 * changes nothing and answers `installed: false`.
 */
export async function installSkill(
  userId: string,
  agentId: string,
  skillId: string,
  limit: number,
  now = new Date(),
): Promise<{ installed: boolean; skill: InstalledSkill }> {
  const existing = await getInstalledSkill(userId, agentId, skillId, true);
  if (existing) return { installed: false, skill: existing };
  const at = now.toISOString();
  const skill: InstalledSkill = { skillId, agentId, enabled: true, config: {}, installedAt: at, updatedAt: at };
  try {
    await transactRetrying(
      [
        tx.put({ ...keys.installedSkill(userId, agentId, skillId), ...skill }, { expression: 'attribute_not_exists(pk)' }),
        tx.update(
          keys.skillQuota(userId, agentId),
          { expression: 'ADD #count :one SET updatedAt = :at', names: COUNT, values: { ':one': 1, ':at': at } },
          { expression: 'attribute_not_exists(#count) OR #count < :limit', names: COUNT, values: { ':limit': limit } },
        ),
        tx.conditionCheck(keys.agent(userId, agentId), { expression: 'attribute_exists(pk)' }),
        tx.update(keys.catalogueSkill(skillId), { expression: 'ADD downloads :one', values: { ':one': 1 } }),
      ],
      QUOTA_ATTEMPTS,
    );
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const [put, quota, agent] = err.reasons;
    if (agent === 'ConditionalCheckFailed') throw new AgentNotFoundError();
    if (put === 'ConditionalCheckFailed') {
      const raced = await getInstalledSkill(userId, agentId, skillId, true);
      if (raced) return { installed: false, skill: raced };
    }
    if (quota === 'ConditionalCheckFailed') throw new SkillLimitError(await skillQuotaUsed(userId, agentId), limit);
    throw err;
  }
  return { installed: true, skill };
}

/** Removes a skill from an agent and gives its unit of the limit back; false when it was not installed. */
export async function uninstallSkill(userId: string, agentId: string, skillId: string, now = new Date()): Promise<boolean> {
  try {
    await transactRetrying(
      [
        tx.delete(keys.installedSkill(userId, agentId, skillId), { expression: 'attribute_exists(pk)' }),
        tx.update(
          keys.skillQuota(userId, agentId),
          { expression: 'ADD #count :minus SET updatedAt = :at', names: COUNT, values: { ':minus': -1, ':at': now.toISOString() } },
          { expression: '#count > :zero', names: COUNT, values: { ':zero': 0 } },
        ),
      ],
      QUOTA_ATTEMPTS,
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}

/**
 * `/api/agent` update-skill: enables, disables or re-configures an installed skill.
 * `config` replaces the whole settings object. Undefined when the skill is not installed on the agent.
 */
export async function updateInstalledSkill(
  userId: string,
  agentId: string,
  skillId: string,
  change: { enabled?: boolean; config?: Record<string, unknown> },
  now = new Date(),
): Promise<InstalledSkill | undefined> {
  const sets = ['updatedAt = :at'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':at': now.toISOString() };
  for (const field of ['enabled', 'config'] as const) {
    if (change[field] === undefined) continue;
    sets.push(`#${field} = :${field}`);
    names[`#${field}`] = field;
    values[`:${field}`] = change[field];
  }
  try {
    const item = await tenant(userId).update<InstalledSkill & Record<string, unknown>>(
      keys.installedSkill(userId, agentId, skillId),
      { expression: `SET ${sets.join(', ')}`, names: Object.keys(names).length ? names : undefined, values },
      { expression: 'attribute_exists(pk)' },
    );
    return view(item);
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}
