import { instanceConfig } from '#platform/config';
import { agentStatus, type AgentRecord } from '#data/agents';
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

/** Why the agent is paused (its cap, or the loop breaker with its evidence); absent while it is not. */
const pausedOf = (agent: AgentRecord) =>
  agent.pausedReason
    ? { paused: { reason: agent.pausedReason, ...(agent.pausedAt ? { at: agent.pausedAt } : {}), ...(agent.loopTrip ? { loop: { ...agent.loopTrip } } : {}) } }
    : {};

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
