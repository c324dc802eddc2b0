import type { AgentState, PlatformClient } from './platform';

/**
 * The agents this process serves, as the platform's state route gives them (configuration,
 * memory, history, skills, credentials), each with at most `historyLimit` messages of history.
 */
export function agentCache(platform: PlatformClient, historyLimit: number) {
  const agents = new Map<string, AgentState>();
  let ready = false;

  const trimmed = (a: AgentState): AgentState => ({ ...a, messages: a.messages.slice(-historyLimit) });

  return {
    /** Replaces every agent with the platform's state; the first success makes the runtime ready. */
    async load(): Promise<void> {
      const state = await platform.state();
      agents.clear();
      for (const a of state.agents) agents.set(a.id, trimmed(a));
      ready = true;
    },

    /** An agent provisioned after this process started is fetched on first use. */
    async agentFor(agentId: string): Promise<AgentState | undefined> {
      const known = agents.get(agentId);
      if (known) return known;
      const state = await platform.state(agentId);
      const found = state.agents.find((a) => a.id === agentId);
      if (found) agents.set(agentId, trimmed(found));
      return agents.get(agentId);
    },

    /** Only an agent already held here, never fetched from the platform. */
    loaded: (agentId: string): AgentState | undefined => agents.get(agentId),
    count: () => agents.size,
    isReady: () => ready,
  };
}

export type AgentCache = ReturnType<typeof agentCache>;
