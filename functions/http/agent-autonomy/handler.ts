import { agentAutonomyContract } from '#contract/autonomy';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';

/**
 * Each route family is loaded on its first call: budgets (with the resume-under-cap path and its
 * launcher), the loop breaker, schedules (with the cron parser and the entitlements), export and import (with the
 * skill catalogue and the agent schemas), checkpoints (with file storage). A container started for one family parses
 * only that one.
 */
const budgets = () => import('./budgets');
const loopBreaker = () => import('./loop-breaker');
const schedules = () => import('./schedules');
const portability = () => import('./portability');
const checkpoints = () => import('./checkpoints');

export const handler = createHandler(agentAutonomyContract, {
  getAccountBudget: async ({ auth }) => (await budgets()).accountBudget(auth.userId),
  putAccountBudget: async ({ auth, body }) => (await budgets()).setAccountBudget(auth.userId, body.monthlyCapUsd),
  getAgentBudget: async ({ auth, params }) => (await budgets()).agentBudget(auth.userId, params.id),
  putAgentBudget: async ({ auth, params, body }) => (await budgets()).setAgentBudget(auth.userId, params.id, body.monthlyCapUsd),
  getAgentLoopBreaker: async ({ auth, params }) => (await loopBreaker()).loopBreakerOf(auth.userId, params.id),
  putAgentLoopBreaker: async ({ auth, params, body }) => (await loopBreaker()).setLoopBreaker(auth.userId, params.id, body),
  resumeAgentLoopBreaker: async ({ auth, params }) => (await loopBreaker()).resumeLoopBreaker(auth.userId, params.id),
  listAgentSchedules: async ({ auth, params }) => (await schedules()).schedulesOf(auth.userId, params.id),
  createAgentSchedule: async ({ auth, params, body }) => reply.created({ schedule: await (await schedules()).addSchedule(auth, params.id, body) }),
  getAgentSchedule: async ({ auth, params }) => (await schedules()).scheduleDetail(auth.userId, params.id, params.scheduleId),
  updateAgentSchedule: async ({ auth, params, body }) => (await schedules()).pauseOrResume(auth.userId, params.id, params.scheduleId, body.paused),
  deleteAgentSchedule: async ({ auth, params }) => (await schedules()).removeSchedule(auth.userId, params.id, params.scheduleId),
  exportAgent: async ({ auth, params, query }) => (await portability()).exportAgent(auth.userId, params.id, query.history === 'true'),
  importAgent: async ({ auth, body }) => reply.created(await (await portability()).importAgent(auth, body)),
  listAgentCheckpoints: async ({ auth, params }) => (await checkpoints()).listAgentCheckpoints(auth, params.id),
  createAgentCheckpoint: async ({ auth, params, body }) => reply.created(await (await checkpoints()).createAgentCheckpoint(auth, params.id, body.name)),
  getAgentCheckpoint: async ({ auth, params }) => (await checkpoints()).describeAgentCheckpoint(auth, params.id, params.checkpointId),
  deleteAgentCheckpoint: async ({ auth, params }) => (await checkpoints()).deleteAgentCheckpoint(auth, params.id, params.checkpointId),
  rewindAgentCheckpoint: async ({ auth, params }) => (await checkpoints()).rewindAgentCheckpoint(auth, params.id, params.checkpointId),
  cloneAgentCheckpoint: async ({ auth, params, body }) =>
    reply.created(await (await checkpoints()).cloneAgentCheckpoint(auth, params.id, params.checkpointId, body?.name)),
});
