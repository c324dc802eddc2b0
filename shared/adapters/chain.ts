import { createPublicClient, http, type PublicClient } from 'viem';

/**
 * Chain RPC through viem public clients, one per RPC URL per container. Every call is bounded:
 * an RPC that is down costs at most `timeoutMs` and surfaces as an error the caller turns into a
 * clear answer (401/503, or an "unavailable" balance), never a hung request or a 500.
 */
export const CHAIN_TIMEOUT_MS = 3000;

const clients = new Map<string, PublicClient>();

export function publicClient(rpcUrl: string, timeoutMs = CHAIN_TIMEOUT_MS): PublicClient {
  const key = `${rpcUrl}|${timeoutMs}`;
  let c = clients.get(key);
  if (!c) {
    c = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) }) as PublicClient;
    clients.set(key, c);
  }
  return c;
}
