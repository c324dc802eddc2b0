import { agentsContract } from '#contract/agents';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { deprecationHeaders, removeAgent } from './deprecated';
import { provisionAgent } from '#domain/agents/provision';
import { agentConfig, agentDetail, agentMessages, agentsOf, putAgentConfig } from '#domain/agents/read';
import { agentStats } from './stats';

export const handler = createHandler(agentsContract, {
  listAgents: async ({ auth }) => {
    const agents = await agentsOf(auth);
    return { agents, count: agents.length, status: 'ok' as const };
  },
  listProvisionedAgents: async ({ auth }) => {
    const agents = await agentsOf(auth);
    return { success: true as const, agents, count: agents.length };
  },
  provisionAgent: async ({ auth, body }) => {
    return reply.created(await provisionAgent(auth, body));
  },
  getAgent: async ({ auth, params }) => agentDetail(auth, params.id),
  getAgentConfig: async ({ auth, params }) => agentConfig(auth, params.id),
  updateAgentConfig: async ({ auth, params, body }) => putAgentConfig(auth, params.id, body),
  listAgentMessages: async ({ auth, params, query }) => agentMessages(auth, params.id, query.limit, query.offset),
  getAgentStats: async ({ auth, params }) => agentStats(auth, params.id),
  createAgentDeprecated: async ({ auth, body }) => reply.json(201, await provisionAgent(auth, body), deprecationHeaders('/api/agents/provision')),
  updateAgentDeprecated: async ({ auth, params, body }) =>
    reply.json(200, await putAgentConfig(auth, params.id, body), deprecationHeaders(`/api/agents/${params.id}/config`)),
  deleteAgentDeprecated: async ({ auth, params }) =>
    reply.json(200, await removeAgent(auth, params.id), deprecationHeaders(`/api/instance/${auth.userId}/stop`)),
});
