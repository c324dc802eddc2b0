import { runtimeRequest, RuntimeUnreachableError } from '#adapters/launcher';
import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, planLabel } from '#domain/billing/entitlements';
import type { AgentConfig } from '#contract/agents';
import { getAgent, listMessages, replaceAgentConfig, type AgentRecord } from '#data/agents';
import { gatewayToken, getInstance, listAgentsWithInstance } from '#data/instances';
import { DomainError, notFound } from '#platform/errors';
import { logger } from '#platform/logger';
import { detail, listItem } from './views';

const byNewest = (a: AgentRecord, b: AgentRecord) => String(b.createdAt ?? '').localeCompare(String(a.createdAt ?? ''));

export async function agentsOf(auth: AuthContext | undefined) {
  if (!auth) return [];
  const { agents, instance } = await listAgentsWithInstance(auth.userId);
  return agents.sort(byNewest).map((a) => listItem(auth.userId, a, instance));
}

/** An owned agent, or the same 404 whether it is missing or someone else's. */
export async function ownAgent(auth: AuthContext, agentId: string): Promise<AgentRecord> {
  const agent = await getAgent(auth.userId, agentId);
  if (!agent) throw notFound('agent not found');
  return agent;
}

export async function agentDetail(auth: AuthContext, agentId: string) {
  const [agent, instance, access] = await Promise.all([ownAgent(auth, agentId), getInstance(auth.userId), accountAccess(auth)]);
  return { agent: detail(auth.userId, agent, instance, planLabel(access)), status: 'ok' as const };
}

export async function agentConfig(auth: AuthContext, agentId: string) {
  const agent = await ownAgent(auth, agentId);
  return { config: agent.config ?? {} };
}

/**
 * Stores the configuration, then has a running instance reload it (the runtime reads it back from
 * the platform, so what it runs is exactly what is stored).
 */
export async function putAgentConfig(auth: AuthContext, agentId: string, config: AgentConfig) {
  await checkFallbackModels(auth, config.fallbackModels);
  const updated = await replaceAgentConfig(auth.userId, agentId, config);
  if (!updated) throw notFound('agent not found');
  const instance = await getInstance(auth.userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status === 'running' && endpoint && updated.phase === 'ready') {
    try {
      const res = await runtimeRequest(endpoint, await gatewayToken(auth.userId), '/reload', { method: 'POST', timeoutMs: 10_000 });
      if (res.status !== 200) throw new RuntimeUnreachableError(`reload answered ${res.status}`);
    } catch (err) {
      if (!(err instanceof RuntimeUnreachableError)) throw err;
      logger().warn('configuration stored but not delivered', { error: err.message });
      throw new DomainError(
        'upstreamFailed',
        'the configuration is stored but the running instance could not be reached; it takes effect at the next start',
        'BACKEND_UNAVAILABLE',
      );
    }
  }
  return { success: true as const, config: updated.config };
}

/** An agent's fallback chain stays within the models of the account's plan. */
async function checkFallbackModels(auth: AuthContext, fallbackModels: readonly string[] | undefined) {
  if (!fallbackModels?.length) return;
  const allowed = (await accountAccess(auth)).models;
  const refused = fallbackModels.find((id) => !allowed.includes(id));
  if (refused) {
    throw new DomainError('invalid', `the account's plan does not include the fallback model ${refused}`, 'FALLBACK_MODEL_NOT_ALLOWED', {
      model: refused,
      allowedModels: [...allowed],
    });
  }
}

export async function agentMessages(auth: AuthContext, agentId: string, limit: number, offset: number) {
  const agent = await ownAgent(auth, agentId);
  const total = Number(agent.messageCount ?? 0);
  const messages = offset >= total ? [] : await listMessages(auth.userId, agentId, limit, offset);
  return { messages, total, limit, offset, status: 'ok' as const };
}
