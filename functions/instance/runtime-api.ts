import type * as z from 'zod';
import { chatCompletion, ModelNotConfiguredError, ModelProviderError } from '../../shared/adapters/model';
import { isAdminEmail, isTesterEmail } from '../../shared/auth/authenticate';
import { presentsGatewayToken } from '../../shared/auth/gateway-token';
import { accountAccess } from '../../shared/billing/entitlements';
import { config } from '../../shared/config';
import { RUNTIME_HISTORY_MESSAGES, type RuntimeChatMessage } from '../../shared/contract/instance';
import { appendExchange, getAgent, listAgents, recentHistory, type AgentRecord, type ExchangeReport } from '../../shared/db/agents';
import { getInstance } from '../../shared/db/instances';
import { listInstalledSkills } from '../../shared/db/installed-skills';
import { readAgentMemory } from '../../shared/db/memory';
import { getUser } from '../../shared/db/users';
import { forbidden, HttpError, notFound, unauthorized } from '../../shared/http/errors';

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
  const [memory, messages, skills] = await Promise.all([
    readAgentMemory(userId, agent.id),
    recentHistory(userId, agent.id, RUNTIME_HISTORY_MESSAGES),
    listInstalledSkills(userId, agent.id),
  ]);
  return {
    id: agent.id,
    name: agent.name,
    model: agentModel(agent),
    config: agent.config ?? {},
    memory: memory?.memory ?? {},
    messages,
    skills: skills.map(({ skillId, enabled, config }) => ({ skillId, enabled, config })),
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

/** The model layer for one agent: plan-gated like every model call, with the provider key kept here. */
export async function completion(userId: string, body: { agentId: string; messages: z.infer<typeof RuntimeChatMessage>[] }) {
  const [agent, instance, owner] = await Promise.all([getAgent(userId, body.agentId), getInstance(userId), getUser(userId, true)]);
  if (!agent || !instance || !owner) throw notFound('no such agent');
  // The account as it is now (its email may have changed since the first launch), with rights only for a proven address.
  const proven = owner.emailVerified === true;
  const email = owner.email;
  const access = await accountAccess({ userId, email, isAdmin: proven && isAdminEmail(email), isTester: proven && isTesterEmail(email), via: 'bearer' });
  if (!access.isAdmin && !access.subscriptionActive) throw new HttpError(402, 'the account has no active subscription', 'SUBSCRIPTION_REQUIRED');
  const model = agentModel(agent);
  if (!access.models.includes(model)) throw forbidden(`the account's plan does not include ${model}`, 'MODEL_RESTRICTED', { allowedModels: access.models });
  try {
    const out = await chatCompletion({ model, messages: body.messages, temperature: agent.config?.temperature, max_tokens: agent.config?.maxTokens });
    return {
      id: out.id,
      object: 'chat.completion' as const,
      created: Math.floor(Date.now() / 1000),
      model: out.model,
      choices: [{ index: 0, message: { role: 'assistant' as const, content: out.content }, finish_reason: out.finishReason }],
      usage: { prompt_tokens: out.usage.promptTokens, completion_tokens: out.usage.completionTokens, total_tokens: out.usage.totalTokens },
    };
  } catch (err) {
    if (err instanceof ModelNotConfiguredError) throw new HttpError(503, err.message, 'MODEL_NOT_CONFIGURED');
    if (err instanceof ModelProviderError) throw new HttpError(502, err.message, 'MODEL_PROVIDER_ERROR');
    throw err;
  }
}
