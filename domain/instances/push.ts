import { gatewayToken, getInstance } from '#data/instances';
import { logger } from '#platform/logger';
import { runtimeRequest, RuntimeUnreachableError } from '#adapters/launcher';

/** A push must not hold up the request that caused it for long: the stored data is the truth either way. */
const PUSH_TIMEOUT_MS = 2000;

/**
 * Tells the account's running instance about a change it holds a copy of (memory, history), so it
 * takes effect at once instead of at the next start. Best effort and bounded: an instance that is
 * not running, not reachable or does not know the agent yet reads the stored state when it next
 * loads it. True when the instance took the change.
 */
export async function pushToRunningInstance(userId: string, path: string, body: unknown): Promise<boolean> {
  const instance = await getInstance(userId);
  const endpoint = instance?.handle?.endpoint;
  if (instance?.status !== 'running' || !endpoint) return false;
  try {
    const res = await runtimeRequest(endpoint, await gatewayToken(userId), path, { method: 'POST', body, timeoutMs: PUSH_TIMEOUT_MS });
    return res.status === 200;
  } catch (err) {
    if (!(err instanceof RuntimeUnreachableError)) throw err;
    logger().warn('stored, but the running instance could not be told', { path, error: err.message });
    return false;
  }
}

/** The runtime's memory route (runtime/agent-routes.ts): `set` merges keys, `replace` swaps the whole memory, `clearHistory` forgets the conversation. */
export const agentMemoryPath = (agentId: string) => `/agents/${encodeURIComponent(agentId)}/memory`;
