import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import { SKILL_CATALOGUE, SKILL_CATEGORIES, type SkillCategory, type SkillName } from '#contract/skills';
import { getAgent } from '#data/agents';
import { installSkill, listInstalledSkills, uninstallSkill } from '#data/installed-skills';
import { listCatalogue, rateSkill } from '#data/skill-catalogue';
import { notFound } from '#platform/errors';

/** Only install, uninstall and the runtime's calls reach the agent's instance: other routes do not load that code. */
export const loadInstanceCalls = () => import('./instance-calls');

export const catalogueName = (id: string): SkillName | undefined => SKILL_CATALOGUE.find((s) => s.name === id)?.name;

export async function listSkills(query: { category?: 'all' | SkillCategory; featured?: 'true' | 'false' }) {
  const all = await listCatalogue();
  const featured = all.filter((s) => s.featured);
  let skills = query.category && query.category !== 'all' ? all.filter((s) => s.category === query.category) : all;
  if (query.featured === 'true') skills = skills.filter((s) => s.featured);
  return { skills, categories: [...SKILL_CATEGORIES], featured };
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
  const { installed, skill } = await installSkill(auth.userId, body.agentId, skillId, limit);
  if (installed) await (await loadInstanceCalls()).deliverToInstance(auth.userId);
  return { success: true as const, installed, skill };
}

export async function listForAgent(auth: AuthContext, agentId: string) {
  const [agent, skills, access] = await Promise.all([getAgent(auth.userId, agentId), listInstalledSkills(auth.userId, agentId), accountAccess(auth)]);
  if (!agent) throw notFound('no such agent');
  return { agentId, skills, count: skills.length, limit: access.limits?.skills ?? 0 };
}

export async function uninstall(auth: AuthContext, agentId: string, skillId: string) {
  if (!(await uninstallSkill(auth.userId, agentId, skillId))) throw notFound('the skill is not installed on that agent');
  await (await loadInstanceCalls()).deliverToInstance(auth.userId);
  return { success: true as const };
}

export async function rate(auth: AuthContext, skillId: string, rating: number) {
  const name = catalogueName(skillId);
  if (!name) throw notFound('no such skill');
  return { success: true as const, skillId: name, ...(await rateSkill(auth.userId, name, rating)) };
}
