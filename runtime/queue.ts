/** One piece of work at a time per agent, in the order given, so an agent's history stays in order. */
export function perAgentQueue() {
  const queues = new Map<string, Promise<unknown>>();
  return function enqueue<T>(agentId: string, work: () => Promise<T>): Promise<T> {
    const previous = queues.get(agentId) ?? Promise.resolve();
    const next = previous.then(work, work);
    queues.set(
      agentId,
      next.catch(() => undefined),
    );
    return next;
  };
}

export type Enqueue = ReturnType<typeof perAgentQueue>;
