import { requestWake } from '../../shared/lifecycle/wake';
import type * as z from 'zod';
import { generateChat, NoModelAvailableError, ProviderFailureError } from '../../shared/ai/model-layer';
import { isAdminEmail, isTesterEmail } from '../../shared/auth/authenticate';
import { presentsGatewayToken } from '../../shared/auth/gateway-token';
import { accessFrom, getSubscription, requireActiveSubscription } from '../../shared/billing/entitlements';
import { config } from '../../shared/config';
import { A2aLimitError, countA2aMessage } from '../../shared/db/a2a';
import { RUNTIME_HISTORY_MESSAGES, type RuntimeChatMessage } from '../../shared/contract/instance';
import { appendExchange, getAgent, listAgents, recentHistory, type AgentRecord, type ExchangeReport } from '../../shared/db/agents';
import { openAgentCredentials } from '../../shared/db/agent-credentials';
import { getInstance } from '../../shared/db/instances';
import { listInstalledSkills } from '../../shared/db/installed-skills';
import { readAgentMemory } from '../../shared/db/memory';
import { getUser } from '../../shared/db/users';
import { HttpError, notFound, unauthorized } from '../../shared/http/errors';

/**
 * The platform side of the agent runtime: routes an instance calls with its gateway token to load
 * its agents, store each exchange and reach the model layer. The token is checked against its
 * stored hash, so these routes never decrypt it.
 */

export async function requireRuntime(userId: string, authorization: string | undefined): Promise<void> {
  if (!(await presentsGatewayToken(userId, authorization))) throw unauthorized('a valid gateway token is required', 'TOKEN_INVALID');
}

/** The model the platform answers an agent with: its configured one, else the one it was provisioned with. */
export const agentModel = (agent: Pick<AgentRecord, 'model' | 'config'>) => agent.config?.model ?? agent.model;

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
    runtimeVersion: instance?.runtimeVersion ?? config().runtimeVersion,
    agents: await Promise.all(served.map((a) => agentState(userId, a))),
  };
}

export async function reportExchange(userId: string, body: { agentId: string } & ExchangeReport) {
  const stored = await appendExchange(userId, body.agentId, body);
  if (!stored) throw notFound('no such agent');
  return { success: true as const };
}

/**
 * The instance acts with its account's rights as they are now: the current email (it may have
 * changed since the first launch), and admin or tester rights only for a proven address.
 */
async function ownerRights(userId: string): Promise<{ isAdmin: boolean; isTester: boolean } | undefined> {
  const owner = await getUser(userId, true);
  if (!owner) return undefined;
  const proven = owner.emailVerified === true;
  return { isAdmin: proven && isAdminEmail(owner.email), isTester: proven && isTesterEmail(owner.email) };
}

/**
 * The model layer for one agent: the same gate and metering as every model call (shared/ai), with
 * the provider key kept here. This route keeps its own codes for "no provider" and provider
 * failures, which the runtime shows its users.
 */
export async function completion(userId: string, body: { agentId: string; messages: z.infer<typeof RuntimeChatMessage>[] }) {
  const [agent, instance, rights] = await Promise.all([getAgent(userId, body.agentId), getInstance(userId), ownerRights(userId)]);
  if (!agent || !instance || !rights) throw notFound('no such agent');
  try {
    const out = await generateChat({
      caller: { kind: 'account', account: { userId, ...rights }, agentId: agent.id },
      model: agentModel(agent),
      messages: body.messages,
      temperature: agent.config?.temperature,
      maxTokens: agent.config?.maxTokens,
    });
    return {
      id: out.id,
      object: 'chat.completion' as const,
      created: Math.floor(Date.now() / 1000),
      model: out.model,
      choices: [{ index: 0, message: { role: 'assistant' as const, content: out.text }, finish_reason: out.finishReason }],
      usage: { prompt_tokens: out.usage.promptTokens, completion_tokens: out.usage.completionTokens, total_tokens: out.usage.totalTokens },
    };
  } catch (err) {
    if (err instanceof NoModelAvailableError)
      throw new HttpError(503, `no model provider is configured for ${agentModel(agent)}: ${err.message}`, 'MODEL_NOT_CONFIGURED');
    if (err instanceof ProviderFailureError) throw new HttpError(502, err.message, 'MODEL_PROVIDER_ERROR');
    throw err;
  }
}

/**
 * Agent-to-agent message (spec 2.16): one of the account's agents writes to another of its agents
 * through the platform. Counted against the plan's daily A2A limit (429 with `current` and `limit`);
 * the message lands in the recipient's history, where its runtime reads it (an instance stopped for
 * idleness is woken for it, issue 22).
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
  let count: number;
  try {
    count = await countA2aMessage(userId, from.id, limit);
  } catch (err) {
    if (err instanceof A2aLimitError) throw new HttpError(429, err.message, 'A2A_LIMIT_REACHED', { current: err.current, limit: err.limit });
    throw err;
  }
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
