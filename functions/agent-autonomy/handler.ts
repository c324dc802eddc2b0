import { agentAutonomyContract } from '../../shared/contract/autonomy';
import { createHandler } from '../../shared/http/pipeline';
import { reply } from '../../shared/http/reply';
import { accountBudget, agentBudget, setAccountBudget, setAgentBudget } from './budgets';
import { addSchedule, pauseOrResume, removeSchedule, scheduleDetail, schedulesOf } from './schedules';

/**
 * Export and import carry the skill catalogue and the agent schemas (~60 KB): loaded on their first
 * call, so the budget and schedule routes start without them.
 */
const portability = () => import('./portability');

export const handler = createHandler(agentAutonomyContract, {
  getAccountBudget: async ({ auth }) => accountBudget(auth.userId),
  putAccountBudget: async ({ auth, body }) => setAccountBudget(auth.userId, body.monthlyCapUsd),
  getAgentBudget: async ({ auth, params }) => agentBudget(auth.userId, params.id),
  putAgentBudget: async ({ auth, params, body }) => setAgentBudget(auth.userId, params.id, body.monthlyCapUsd),
  listAgentSchedules: async ({ auth, params }) => schedulesOf(auth.userId, params.id),
  createAgentSchedule: async ({ auth, params, body }) => reply.created({ schedule: await addSchedule(auth, params.id, body) }),
  getAgentSchedule: async ({ auth, params }) => scheduleDetail(auth.userId, params.id, params.scheduleId),
  updateAgentSchedule: async ({ auth, params, body }) => pauseOrResume(auth.userId, params.id, params.scheduleId, body.paused),
  deleteAgentSchedule: async ({ auth, params }) => removeSchedule(auth.userId, params.id, params.scheduleId),
  exportAgent: async ({ auth, params, query }) => (await portability()).exportAgent(auth.userId, params.id, query.history === 'true'),
  importAgent: async ({ auth, body }) => reply.created(await (await portability()).importAgent(auth, body)),
});
