import type { Client } from 'viem';
import { outsideCallSignal } from '#platform/deadline';

/**
 * Chain RPC through viem clients, one per RPC URL per container. Every call is bounded:
 * an RPC that is down costs at most `timeoutMs` and surfaces as an error the caller turns into a
 * clear answer (401/503, or an "unavailable" balance), never a hung request or a 500.
 */
export const CHAIN_TIMEOUT_MS = 3000;

const bareClients = new Map<string, Client>();

/**
 * The clients live per container, but each call ends before the deadline of the request that
 * makes it (platform/deadline.ts), so a hung RPC answers CHAIN_UNAVAILABLE while there is time to.
 */
const fetchWithinDeadline =
  (timeoutMs: number) =>
  (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const bound = outsideCallSignal(timeoutMs);
    return fetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, bound]) : bound });
  };

/**
 * A bounded transport without viem's public actions attached: callers load only the actions they
 * use from `viem/actions`, through their own viem-*.ts wrapper (`call(await chainClient(url), ...)`),
 * which keeps viem's many unused actions out of the function bundle (docs/architecture.md §11). viem
 * itself is loaded on the first call, so the routes of a function that never reach a chain do not pay for it.
 */
export async function chainClient(rpcUrl: string, timeoutMs = CHAIN_TIMEOUT_MS): Promise<Client> {
  const key = `${rpcUrl}|${timeoutMs}`;
  let c = bareClients.get(key);
  if (!c) {
    const { createClient, http } = await import('./viem-client');
    c = createClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0, fetchFn: fetchWithinDeadline(timeoutMs) }) });
    bareClients.set(key, c);
  }
  return c;
}
