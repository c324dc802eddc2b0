import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { agentsContract } from '../../shared/contract/agents';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
import { accountBudget, agentBudget, setAccountBudget, setAgentBudget } from './budgets';
import { deprecationHeaders, removeAgent } from './deprecated';
import { agentLogs } from './logs';
import { exportAgent, importAgent } from './portability';
import { provisionAgent } from './provision';
import { agentConfig, agentDetail, agentMessages, agentsOf, putAgentConfig } from './read';
import { addSchedule, pauseOrResume, removeSchedule, scheduleDetail, schedulesOf } from './schedules';
import { agentStats } from './stats';
import { readVerification, removeVerification, verify } from './verify';
import { passkeyAssertionOptions, passkeyRegistrationOptions, registerPasskey } from './webauthn';

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
  getAgentVerification: async ({ auth, params }) => readVerification(auth, params.id),
  verifyAgent: async ({ auth, params, body }) => verify(auth, params.id, body),
  removeAgentVerification: async ({ auth, params }) => removeVerification(auth, params.id),
  createAgentDeprecated: async ({ auth, body }) => reply.json(201, await provisionAgent(auth, body), deprecationHeaders('/api/agents/provision')),
  updateAgentDeprecated: async ({ auth, params, body }) =>
    reply.json(200, await putAgentConfig(auth, params.id, body), deprecationHeaders(`/api/agents/${params.id}/config`)),
  deleteAgentDeprecated: async ({ auth, params }) =>
    reply.json(200, await removeAgent(auth, params.id), deprecationHeaders(`/api/instance/${auth.userId}/stop`)),
  getAgentLogs: async ({ auth, params, query, headers }) => agentLogs(auth, params.id, query, headers.accept),
  passkeyRegistrationOptions: async ({ auth, params }) => passkeyRegistrationOptions(auth, params.id),
  registerPasskey: async ({ auth, params, body }) => reply.created(await registerPasskey(auth, params.id, body.response as RegistrationResponseJSON)),
  passkeyAssertionOptions: async ({ auth, params }) => passkeyAssertionOptions(auth, params.id),
  getAccountBudget: async ({ auth }) => accountBudget(auth.userId),
  putAccountBudget: async ({ auth, body }) => setAccountBudget(auth.userId, body.monthlyCapUsd),
  getAgentBudget: async ({ auth, params }) => agentBudget(auth.userId, params.id),
  putAgentBudget: async ({ auth, params, body }) => setAgentBudget(auth.userId, params.id, body.monthlyCapUsd),
  listAgentSchedules: async ({ auth, params }) => schedulesOf(auth.userId, params.id),
  createAgentSchedule: async ({ auth, params, body }) => reply.created({ schedule: await addSchedule(auth, params.id, body) }),
  getAgentSchedule: async ({ auth, params }) => scheduleDetail(auth.userId, params.id, params.scheduleId),
  updateAgentSchedule: async ({ auth, params, body }) => pauseOrResume(auth.userId, params.id, params.scheduleId, body.paused),
  deleteAgentSchedule: async ({ auth, params }) => removeSchedule(auth.userId, params.id, params.scheduleId),
  exportAgent: async ({ auth, params, query }) => exportAgent(auth.userId, params.id, query.history === 'true'),
  importAgent: async ({ auth, body }) => reply.created(await importAgent(auth, body)),
});
