import { requestWake } from '#domain/lifecycle/wake';
import { accessFrom, getSubscription, requireActiveSubscription } from '#domain/billing/entitlements';
import { instanceConfig } from '#platform/config';
import { countA2aMessage } from '#data/a2a';
import { RUNTIME_HISTORY_MESSAGES } from '#contract/instance';
import { appendExchange, getAgent, listAgents, recentHistory, type AgentRecord, type ExchangeReport } from '#data/agents';
import { openAgentCredentials } from '#data/agent-credentials';
import { getInstance } from '#data/instances';
import { listInstalledSkills } from '#data/installed-skills';
import { readAgentMemory } from '#data/memory';
import { notFound } from '#platform/errors';
import { agentModel, ownerRights } from '#domain/auth/runtime-agent';

/**
 * The platform side of the agent runtime: routes an instance calls with its gateway token to load
 * its agents, store each exchange and message another agent (its model calls live apart, in
 * functions/http/runtime-model).
 */

async function agentState(userId: string, agent: AgentRecord) {
  const [memory, messages, skills, credentials] = await Promise.all([
    readAgentMemory(userId, agent.id),
    recentHistory(userId, agent.id, RUNTIME_HISTORY_MESSAGES, agent.historyResetAt),
    listInstalledSkills(userId, agent.id),
    openAgentCredentials(userId, agent.id),
  ]);
  return {
    id: agent.id,
    name: agent.name,
    model: agentModel(agent),
    config: agent.config ?? {},
    memory: memory?.memory ?? {},
    messages,
    skills: skills.map(({ skillId, enabled, config }) => ({ skillId, enabled, config })),
    credentials,
  };
}

export async function runtimeState(userId: string, agentId: string | undefined) {
  const [instance, agents] = await Promise.all([getInstance(userId), agentId ? getAgent(userId, agentId).then((a) => (a ? [a] : [])) : listAgents(userId)]);
  const served = agents.filter((a) => a.phase !== 'error');
  return {
    userId,
    runtimeVersion: instance?.runtimeVersion ?? instanceConfig().runtimeVersion,
    agents: await Promise.all(served.map((a) => agentState(userId, a))),
  };
}

export async function reportExchange(userId: string, body: { agentId: string } & ExchangeReport) {
  const stored = await appendExchange(userId, body.agentId, body);
  if (!stored) throw notFound('no such agent');
  return { success: true as const };
}

/**
 * Agent-to-agent message (spec 2.16): one of the account's agents writes to another of its agents
 * through the platform. Counted against the plan's daily A2A limit (429 with `current` and `limit`);
 * the message lands in the recipient's history, where its runtime reads it (an instance stopped for
 * idleness is woken for it).
 */
export async function sendA2aMessage(userId: string, body: { fromAgentId: string; toAgentId: string; message: string }) {
  const [from, to, instance, rights] = await Promise.all([
    getAgent(userId, body.fromAgentId),
    getAgent(userId, body.toAgentId),
    getInstance(userId),
    ownerRights(userId),
  ]);
  if (!from || !to || !instance || !rights) throw notFound('no such agent');
  const access = accessFrom({ userId, ...rights }, await getSubscription(userId));
  requireActiveSubscription(access);
  const limit = access.limits?.a2aMessagesPerDay ?? 0;
  const count = await countA2aMessage(userId, from.id, limit);
  const [stored] = (await appendExchange(userId, to.id, { messages: [{ role: 'user', content: `[agent ${from.name} (${from.id})] ${body.message}` }] })) ?? [];
  if (!stored) throw notFound('no such agent');
  // The message waits in the history; an instance stopped for idleness is woken to read it (no wait: the sender runs).
  if (instance.status === 'stopped') await requestWake(userId, 'a2a');
  return {
    success: true as const,
    message: { id: stored.id, fromAgentId: from.id, toAgentId: to.id, createdAt: stored.createdAt },
    usage: { today: count, limit },
  };
}
