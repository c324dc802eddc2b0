import { getAgent, pausedByLoop } from '#data/agents';
import { putLoopBreakerSettings } from '#data/loop-breaker';
import { type LoopBreakerSettings, loopBreakerSettings, resumeLoopPausedAgent } from '#domain/ai/loop-breaker';
import { notFound } from '#platform/errors';

/** The loop breaker's routes: thresholds, state and the owner's resume; the watch itself lives in domain/ai/loop-breaker.ts. */

async function ownedAgent(userId: string, agentId: string) {
  const agent = await getAgent(userId, agentId, true);
  if (!agent) throw notFound('no such agent');
  return agent;
}

const view = (agentId: string, agent: Awaited<ReturnType<typeof ownedAgent>>) => ({
  agentId,
  settings: loopBreakerSettings(agent),
  paused: pausedByLoop(agent),
  trip: agent.loopTrip ?? null,
});

export async function loopBreakerOf(userId: string, agentId: string) {
  return { loopBreaker: view(agentId, await ownedAgent(userId, agentId)) };
}

export async function setLoopBreaker(userId: string, agentId: string, settings: LoopBreakerSettings) {
  if (!(await putLoopBreakerSettings(userId, agentId, { ...settings }))) throw notFound('no such agent');
  return loopBreakerOf(userId, agentId);
}

export async function resumeLoopBreaker(userId: string, agentId: string) {
  await ownedAgent(userId, agentId);
  const resumed = await resumeLoopPausedAgent(userId, agentId);
  return { ...(await loopBreakerOf(userId, agentId)), resumed };
}
