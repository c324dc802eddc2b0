import type { memoryContract } from '#contract/memory';
import { agentMemoryPath, pushToRunningInstance } from '#domain/instances/push';
import { AgentNotFoundError, readAgentMemory, writeAgentMemory, type MemoryEntry } from '#data/memory';
import type { OperationContext } from '#http/pipeline';
import { encodeBulk, encodeEntry } from '#domain/memory/limits';
import { autoCheckpoint } from '#domain/agents/checkpoints';

type Route<Op extends string> = Extract<(typeof memoryContract)['routes'][number], { operation: Op }>;

export async function getMemory({ auth, query }: OperationContext<Route<'getMemory'>>) {
  const found = await readAgentMemory(auth.userId, query.agentId);
  if (!found) throw new AgentNotFoundError();
  return { memory: found.memory, agentId: query.agentId, count: found.count, lastUpdated: found.lastUpdated };
}

/**
 * The validated body decides the shape; the values are taken from the request text itself, because
 * validation rebuilds objects without `__proto__` keys and memory must read back exactly as written.
 */
const exactMemory = (rawBody: string): unknown => (JSON.parse(rawBody) as { memory: unknown }).memory;

export async function writeMemory({ auth, body, rawBody }: OperationContext<Route<'writeMemory'>>) {
  const memory = exactMemory(rawBody);
  const single = 'key' in body;
  const entries: MemoryEntry[] = single ? [encodeEntry(body.key, memory)] : encodeBulk(memory as Record<string, unknown>);
  // A bulk write can overwrite much at once: the state before it is kept to go back to.
  if (!single) await autoCheckpoint(auth.userId, body.agentId, 'memory-write');
  const saved = await writeAgentMemory(auth.userId, body.agentId, entries);
  const changed = single ? Object.fromEntries([[body.key, memory]]) : (memory as Record<string, unknown>);
  await pushToRunningInstance(auth.userId, agentMemoryPath(body.agentId), { set: changed });
  if (single) return { success: true, agentId: body.agentId, key: body.key, saved };
  return { success: true, agentId: body.agentId, keysUpdated: entries.length, saved };
}
