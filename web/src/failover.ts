/** What a `model.failover` / `model.restored` event carries in `details`. */
interface FailoverEvent {
  type: string;
  at: string;
  agentId?: string;
  details?: { [key: string]: unknown };
}

export interface OpenFailover {
  /** The agent's model that failed. */
  model: string;
  /** The model answering in its place. */
  fallback: string;
  /** Why the platform moved: `rate-limited`, `server-error`, `connection`, `first-token-timeout`, `response-timeout`. */
  cause: string;
  since: string;
}

const CAUSES: Record<string, string> = {
  'rate-limited': 'its provider is refusing calls for now (rate limited)',
  'server-error': 'its provider is failing (server errors)',
  connection: 'its provider cannot be reached',
  'first-token-timeout': 'it did not start answering in time',
  'response-timeout': 'it did not answer in time',
};

/** The reason of a failover in words for the agent page. */
export const failoverCauseInWords = (cause: string) => CAUSES[cause] ?? 'it failed';

/**
 * The failovers still in force for an agent, from its events newest first: per model, the newest of
 * `model.failover` and `model.restored` decides. Events of the account (no agent) count for every agent.
 */
export function openFailovers(events: readonly FailoverEvent[], agentId: string): OpenFailover[] {
  const decided = new Set<string>();
  const open: OpenFailover[] = [];
  for (const event of events) {
    if (event.type !== 'model.failover' && event.type !== 'model.restored') continue;
    if (event.agentId && event.agentId !== agentId) continue;
    const model = typeof event.details?.model === 'string' ? event.details.model : undefined;
    if (!model || decided.has(model)) continue;
    decided.add(model);
    const fallback = event.details?.fallback;
    if (event.type === 'model.failover' && typeof fallback === 'string') {
      const cause = typeof event.details?.cause === 'string' ? event.details.cause : 'server-error';
      open.push({ model, fallback, cause, since: event.at });
    }
  }
  return open;
}
