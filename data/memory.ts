import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Agent memory (spec 2.11, 4.6): one item per key at `USER#<id> / MEMORY#<agentId>#<key>`, in the
 * owner's partition beside the agent. The value is kept as its JSON text: DynamoDB's own types
 * cannot hold every JSON value (numbers beyond 38 digits, nesting deeper than 32), and the text is
 * exactly what the size limit measures.
 */
export interface MemoryEntry {
  key: string;
  /** The value's compact JSON text. */
  encoded: string;
  bytes: number;
}

interface MemoryItem extends Record<string, unknown> {
  agentId: string;
  key: string;
  value: string;
  bytes: number;
  updatedAt: string;
}

export interface AgentMemory {
  memory: Record<string, unknown>;
  count: number;
  /** The newest write among the keys; null while there are none. */
  lastUpdated: string | null;
}

/** The agent is not in the caller's partition (never existed, another user's, or deleted meanwhile). */
export class AgentNotFoundError extends DomainError {
  constructor() {
    super('notFound', 'agent not found', 'NOT_FOUND');
  }
}

/**
 * The whole memory of an owned agent, or undefined when the agent is not the caller's. Also what
 * the runtime loader delivers to a starting instance, so a restart loses nothing.
 */
export async function readAgentMemory(userId: string, agentId: string): Promise<AgentMemory | undefined> {
  const store = tenant(userId);
  const [agent, items] = await Promise.all([store.get(keys.agent(userId, agentId)), store.queryAll<MemoryItem>(keys.memoryPrefix(agentId))]);
  if (!agent) return undefined;
  let lastUpdated: string | null = null;
  for (const item of items) if (lastUpdated === null || item.updatedAt > lastUpdated) lastUpdated = item.updatedAt;
  // fromEntries defines own properties, so a key named `__proto__` stays an ordinary key.
  const memory = Object.fromEntries(items.map((item) => [item.key, JSON.parse(item.value)]));
  return { memory, count: items.length, lastUpdated };
}

/**
 * Writes the entries and checks that the agent still exists, in one transaction: either every key
 * is written or none is. Callers check the sizes first (MEMORY_BULK_MAX_KEYS and
 * MEMORY_BULK_MAX_TOTAL_BYTES in contract/memory.ts), which keep the transaction inside DynamoDB's
 * limits of 100 items and 4 MB. Returns the time written.
 */
export async function writeAgentMemory(userId: string, agentId: string, entries: MemoryEntry[], now = new Date()): Promise<string> {
  const updatedAt = now.toISOString();
  const items = [
    tx.conditionCheck(keys.agent(userId, agentId), { expression: 'attribute_exists(pk)' }),
    ...entries.map((e) =>
      tx.put({ ...keys.memory(userId, agentId, e.key), agentId, key: e.key, value: e.encoded, bytes: e.bytes, updatedAt } satisfies MemoryItem),
    ),
  ];
  try {
    await transactRetrying(items);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') throw new AgentNotFoundError();
    throw err;
  }
  return updatedAt;
}

/** Deletes every memory key of an agent (agent deletion, memory reset). Not atomic: it may be re-run. */
export async function clearAgentMemory(userId: string, agentId: string): Promise<number> {
  const store = tenant(userId);
  const items = await store.queryAll<MemoryItem>(keys.memoryPrefix(agentId));
  for (let i = 0; i < items.length; i += 25) {
    await Promise.all(items.slice(i, i + 25).map((item) => store.delete({ pk: item.pk, sk: item.sk })));
  }
  return items.length;
}

/** Deletes the named memory keys of an agent (a rewind removes the keys written after its checkpoint). */
export async function deleteAgentMemoryKeys(userId: string, agentId: string, memoryKeys: string[]): Promise<void> {
  const store = tenant(userId);
  for (let i = 0; i < memoryKeys.length; i += 25) {
    await Promise.all(memoryKeys.slice(i, i + 25).map((key) => store.delete(keys.memory(userId, agentId, key))));
  }
}
