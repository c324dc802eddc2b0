import type { AuthContext } from '../../shared/auth/authenticate';
import { presentsGatewayToken } from '../../shared/auth/gateway-token';
import { accountAccess, requireActiveSubscription } from '../../shared/billing/entitlements';
import { SKILL_CATALOGUE, SKILL_CATEGORIES, type SkillCategory, type SkillName } from '../../shared/contract/skills';
import { getAgent } from '../../shared/db/agents';
import { AgentNotFoundError, getInstalledSkill, installSkill, listInstalledSkills, SkillLimitError, uninstallSkill } from '../../shared/db/installed-skills';
import { listCatalogue, rateSkill } from '../../shared/db/skill-catalogue';
import { HttpError, notFound, unauthorized } from '../../shared/http/errors';
import { logger } from '../../shared/http/logger';
import { runtimeRequest } from '../../shared/adapters/launcher';
import { gatewayToken, getInstance } from '../../shared/db/instances';
import { runSkill } from './call';

const catalogueName = (id: string): SkillName | undefined => SKILL_CATALOGUE.find((s) => s.name === id)?.name;

export async function listSkills(query: { category?: 'all' | SkillCategory; featured?: 'true' | 'false' }) {
  const all = await listCatalogue();
  const featured = all.filter((s) => s.featured);
  let skills = query.category && query.category !== 'all' ? all.filter((s) => s.category === query.category) : all;
  if (query.featured === 'true') skills = skills.filter((s) => s.featured);
  return { skills, categories: [...SKILL_CATEGORIES], featured };
}

/**
 * A running instance reloads its agents (installed skills included), as it does for a new
 * configuration. The install is stored either way: an instance that cannot be reached now loads
 * it at its next start, so this never fails the request.
 */
async function deliverToInstance(userId: string): Promise<void> {
  const instance = await getInstance(userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint) return;
  try {
    const res = await runtimeRequest(endpoint, await gatewayToken(userId), '/reload', { method: 'POST', timeoutMs: 10_000 });
    if (res.status !== 200) logger().warn('the instance did not reload its skills', { status: res.status });
  } catch (err) {
    logger().warn('the instance could not be asked to reload its skills', { error: (err as Error).message });
  }
}

/** The plan's skill limit per agent; admins get the largest plan's. */
async function skillLimit(auth: AuthContext): Promise<number> {
  const access = await accountAccess(auth);
  requireActiveSubscription(access);
  return access.limits?.skills ?? 0;
}

export async function install(auth: AuthContext, body: { skillId: string; agentId: string }) {
  const skillId = catalogueName(body.skillId);
  if (!skillId) throw notFound('no such skill');
  const limit = await skillLimit(auth);
  try {
    const { installed, skill } = await installSkill(auth.userId, body.agentId, skillId, limit);
    if (installed) await deliverToInstance(auth.userId);
    return { success: true as const, installed, skill };
  } catch (err) {
    if (err instanceof AgentNotFoundError) throw notFound('no such agent');
    if (err instanceof SkillLimitError) {
      throw new HttpError(429, `skill limit reached: the plan allows ${err.limit} skills per agent`, 'SKILL_LIMIT_REACHED', {
        current: err.current,
        limit: err.limit,
      });
    }
    throw err;
  }
}

export async function listForAgent(auth: AuthContext, agentId: string) {
  const [agent, skills, access] = await Promise.all([getAgent(auth.userId, agentId), listInstalledSkills(auth.userId, agentId), accountAccess(auth)]);
  if (!agent) throw notFound('no such agent');
  return { agentId, skills, count: skills.length, limit: access.limits?.skills ?? 0 };
}

export async function uninstall(auth: AuthContext, agentId: string, skillId: string) {
  if (!(await uninstallSkill(auth.userId, agentId, skillId))) throw notFound('the skill is not installed on that agent');
  await deliverToInstance(auth.userId);
  return { success: true as const };
}

export async function rate(auth: AuthContext, skillId: string, rating: number) {
  const name = catalogueName(skillId);
  if (!name) throw notFound('no such skill');
  return { success: true as const, skillId: name, ...(await rateSkill(auth.userId, name, rating)) };
}

/** An agent's runtime calls a skill installed (and enabled) on that agent. */
export async function runtimeCall(
  params: { userId: string; agentId: string; skill: string },
  authorization: string | undefined,
  requestId: string,
  body: unknown,
) {
  if (!(await presentsGatewayToken(params.userId, authorization))) throw unauthorized('a valid gateway token is required', 'TOKEN_INVALID');
  const name = catalogueName(params.skill);
  const installed = name && (await getInstalledSkill(params.userId, params.agentId, name));
  if (!name || !installed?.enabled) throw notFound('the skill is not installed on this agent');
  return runSkill(name, { userId: params.userId, agentId: params.agentId, requestId, now: new Date() }, body);
}
