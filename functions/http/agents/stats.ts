import { fetchRuntimeStats, formatMemory, formatPercent, formatTraffic, formatUptime, RuntimeUnreachableError } from '#adapters/launcher';
import type { AuthContext } from '#domain/auth/authenticate';
import type { AgentRecord } from '#data/agents';
import { gatewayToken, getInstance, type InstanceRecord } from '#data/instances';
import { ownAgent } from '#domain/agents/read';

/**
 * Spec 2.7: live figures from the running instance, or, when it cannot be reached, the labelled
 * fallback (`status: mock`) built only from what the platform stores about the agent.
 */
export async function agentStats(auth: AuthContext, agentId: string, now = Date.now()) {
  const [agent, instance] = await Promise.all([ownAgent(auth, agentId), getInstance(auth.userId)]);
  const endpoint = instance?.handle?.endpoint;
  if (agent.phase === 'ready' && instance?.status === 'running' && endpoint) {
    try {
      const s = await fetchRuntimeStats(endpoint, await gatewayToken(auth.userId));
      return {
        status: 'ok' as const,
        stats: {
          agentId,
          cpu: formatPercent(s.cpuPercent),
          memory: `${formatMemory(s.memory.usedBytes)} / ${formatMemory(s.memory.limitBytes)}`,
          memoryPercent: formatPercent((s.memory.usedBytes / s.memory.limitBytes) * 100),
          network: `${formatTraffic(s.network.rxBytes)} / ${formatTraffic(s.network.txBytes)}`,
          uptime: s.uptimeMs,
          uptimeFormatted: formatUptime(s.uptimeMs),
          status: s.status,
          pids: String(s.pids),
          messagesProcessed: 'N/A' as const,
          messagesPerHour: 'N/A' as const,
          averageResponseTime: 'N/A' as const,
          successRate: 'N/A' as const,
          errorRate: 'N/A' as const,
        },
      };
    } catch (err) {
      if (!(err instanceof RuntimeUnreachableError)) throw err;
    }
  }
  return { status: 'mock' as const, stats: storedStats(agent, instance, now) };
}

const ratio = (part: number, whole: number) => (whole > 0 ? (part / whole).toFixed(4) : '0.0000');

/** The fallback: counts the runtime reported with each exchange, and the instance's recorded start. */
export function storedStats(agent: AgentRecord, instance: InstanceRecord | undefined, now: number) {
  const processed = Number(agent.messagesProcessed ?? 0);
  const failed = Number(agent.messagesFailed ?? 0);
  const answered = Math.max(0, processed - failed);
  const since = Date.parse(agent.firstMessageAt ?? agent.readyAt ?? agent.createdAt);
  const hours = Math.max((now - since) / 3_600_000, 1 / 60);
  const startedAt = instance?.status === 'running' && instance.startedAt ? Date.parse(instance.startedAt) : undefined;
  return {
    agentId: agent.id,
    messagesProcessed: processed,
    messagesPerHour: processed ? Math.round((processed / hours) * 100) / 100 : 0,
    averageResponseTime: answered ? Math.round(Number(agent.responseMsTotal ?? 0) / answered) : 0,
    uptime: startedAt ? Math.max(0, now - startedAt) : 0,
    successRate: ratio(answered, processed),
    errorRate: ratio(failed, processed),
    timestamp: new Date(now).toISOString(),
  };
}
