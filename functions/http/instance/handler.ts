import { instanceContract } from '#contract/instance';
import { recordActivity } from '#data/idle-watch';
import { rotateGatewayToken } from '#domain/auth/evict';
import { gatewayToken } from '#data/instances';
import { createHandler, type Operations } from '#http/pipeline';
import { requireOwner } from './owner';
import { repair, resetMemory, restart, start, stop, update } from './lifecycle';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { readInstance, readInstanceStats, readInstanceToken } from './read';
import { authenticateRuntime } from '#domain/auth/runtime-agent';
import { reportExchange, runtimeState, sendA2aMessage } from './runtime-api';

const operations: Operations<typeof instanceContract> = {
  startInstance: async ({ auth, params }) => start(auth, params.userId),
  stopInstance: async ({ auth, params }) => stop(auth, params.userId),
  restartInstance: async ({ auth, params }) => restart(auth, params.userId),
  updateInstance: async ({ auth, params, body }) => update(auth, params.userId, body),
  repairInstance: async ({ auth, params }) => repair(auth, params.userId),
  resetInstanceMemory: async ({ auth, params }) => resetMemory(auth, params.userId),
  getInstance: async ({ auth, params, query }) => readInstance(auth, params.userId, query),
  listInstanceEvents: async ({ auth, params, query }) => {
    requireOwner(auth, params.userId);
    return listLifecycleEvents(auth.userId, query.limit, query.cursor);
  },
  getInstanceStats: async ({ auth, params }) => readInstanceStats(auth, params.userId),
  getInstanceToken: async ({ auth, params }) => readInstanceToken(auth, params.userId),
  rotateInstanceToken: async ({ auth, params }) => {
    const userId = requireOwner(auth, params.userId);
    const rotated = await rotateGatewayToken(userId);
    return { success: true as const, rotated, token: await gatewayToken(userId) };
  },

  getRuntimeState: async ({ runtimeAgent, query }) => runtimeState(runtimeAgent.userId, query.agentId),
  reportRuntimeExchange: async ({ runtimeAgent, body }) => {
    // Messages over the agent's websocket reach the platform only as these reports.
    await recordActivity(runtimeAgent.userId);
    return reportExchange(runtimeAgent.userId, body);
  },
  runtimeA2aMessage: async ({ runtimeAgent, body }) => {
    await recordActivity(runtimeAgent.userId);
    return sendA2aMessage(runtimeAgent.userId, body);
  },
};

export const handler = createHandler(instanceContract, operations, { runtimeAuthenticator: authenticateRuntime });
