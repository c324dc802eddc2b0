import { requestProvisioning } from '#adapters/provisioning-queue';
import type { AuthContext } from '#domain/auth/authenticate';
import { accountAccess, requireActiveSubscription } from '#domain/billing/entitlements';
import type { AgentConfig } from '#contract/agents';
import { createAgent, failAgent, type AgentRecord } from '#data/agents';
import type { TransactItem } from '#data/writes';
import { agentWebsocketUrl } from '#data/instances';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';

export interface ProvisionInput {
  name: string;
  model: string;
  config: AgentConfig;
  source: AgentRecord['source'];
}

/**
 * The one provisioning pipeline (agents and channel provisioning): the plan's agent limit is taken
 * in the same transaction that creates the agent, then the launch is queued. A launch that cannot
 * be queued gives the quota back at once.
 */
export async function provisionFor(
  auth: Pick<AuthContext, 'userId' | 'email'>,
  limit: number,
  input: ProvisionInput,
  opts: { id?: string; also?: TransactItem[] } = {},
): Promise<AgentRecord> {
  const agent = await createAgent(auth.userId, input, limit, opts);
  try {
    await requestProvisioning({ kind: 'agent', userId: auth.userId, agentId: agent.id, ownerEmail: auth.email });
  } catch (err) {
    logger().error('could not queue an agent launch', { error: (err as Error).message });
    await failAgent(auth.userId, agent.id, 'the launch could not be queued');
    throw new DomainError('upstreamFailed', 'the provisioning service is unavailable; try again', 'BACKEND_UNAVAILABLE');
  }
  return agent;
}

export async function provisionAgent(auth: AuthContext, body: { name: string; model: string; config?: AgentConfig }) {
  const access = await accountAccess(auth);
  requireActiveSubscription(access);
  const config = body.config ?? {};
  const model = body.model === 'custom' ? config.model! : body.model;
  const agent = await provisionFor(auth, access.agentLimit, { name: body.name, model, config, source: 'api' });
  return {
    success: true as const,
    agent: {
      id: agent.id,
      name: agent.name,
      status: 'provisioning' as const,
      websocketUrl: agentWebsocketUrl(auth.userId, agent.id),
      model: agent.model,
      createdAt: agent.createdAt,
    },
  };
}
