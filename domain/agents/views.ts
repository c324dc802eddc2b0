import { instanceConfig } from '#platform/config';
import { agentStatus, type AgentRecord, pausedByBudget, pausedByLoop } from '#data/agents';
import { agentWebsocketUrl, instanceUrl, subdomainFor, type InstanceRecord, type ListedInstance } from '#data/instances';

/** Agent list form (spec 2.3). */
export const listItem = (userId: string, agent: AgentRecord, instance: ListedInstance | undefined) => ({
  id: agent.id,
  name: agent.name,
  model: agent.model,
  status: agentStatus(agent, instance?.status),
  websocketUrl: agentWebsocketUrl(userId, agent.id),
  createdAt: agent.createdAt,
  updatedAt: agent.updatedAt,
});

/** Why an agent shows `error`: its own failure (a launch given up), else its instance's; absent otherwise. */
const failureReasonOf = (agent: AgentRecord, instance: InstanceRecord | undefined) => {
  const status = agentStatus(agent, instance?.status);
  const reason = status === 'error' ? (agent.failureReason ?? instance?.lastError) : undefined;
  return reason ? { failureReason: reason } : {};
};

/**
 * Why the agent is paused, absent while it is not: the loop breaker's pause first (only the owner's
 * resume lifts it), with its evidence; `reasons` lists every pause that holds it.
 */
const pausedOf = (agent: AgentRecord) => {
  const reasons = [...(pausedByLoop(agent) ? (['loop'] as const) : []), ...(pausedByBudget(agent) ? (['budget'] as const) : [])];
  if (!reasons.length) return {};
  const at = agent.loopTrip?.at ?? agent.pausedAt;
  return { paused: { reason: reasons[0]!, reasons, ...(at ? { at } : {}), ...(agent.loopTrip ? { loop: { ...agent.loopTrip } } : {}) } };
};

/** Agent detail form (spec 2.4) plus the list-form fields. */
export const detail = (userId: string, agent: AgentRecord, instance: InstanceRecord | undefined, plan: string) => {
  const v = agent.verification;
  return {
    ...listItem(userId, agent, instance),
    startedAt: agent.phase === 'ready' ? (instance?.startedAt ?? null) : null,
    plan,
    subdomain: subdomainFor(userId),
    url: instanceUrl(userId),
    runtimeVersion: instance?.runtimeVersion ?? instanceConfig().runtimeVersion,
    verified: !!v,
    verificationType: v?.verificationType ?? null,
    attestationUid: v?.attestationUid ?? null,
    verifiedAt: v?.verifiedAt ?? null,
    ...failureReasonOf(agent, instance),
    ...pausedOf(agent),
  };
};
