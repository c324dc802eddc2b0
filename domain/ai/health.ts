import { modelConfig } from '#platform/config';
import { platformConnections, probeRequest } from './providers';
import { outsideCallSignal } from '#platform/deadline';

/**
 * Provider health for `GET /api/ai/health`: each configured connection answers its model listing
 * (a cheap, unbilled request). Results are cached per container for a minute so the route cannot
 * be used to hammer the providers.
 */

const CACHE_MS = 60_000;
const PROBE_TIMEOUT_MS = 3_000;

let cached: { at: number; signature: string; providers: Record<string, boolean> } | undefined;

async function probe(url: string, headers: Record<string, string>): Promise<boolean> {
  try {
    const res = await fetch(url, { headers, signal: outsideCallSignal(Math.min(PROBE_TIMEOUT_MS, modelConfig().timeoutMs)), redirect: 'error' });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** name → answering, for every configured provider; empty when none is configured. */
export async function providerHealth(now = Date.now()): Promise<Record<string, boolean>> {
  const connections = platformConnections();
  const signature = connections.map((c) => `${c.name}@${c.baseUrl}`).join(',');
  if (cached && cached.signature === signature && now - cached.at < CACHE_MS) return cached.providers;
  const results = await Promise.all(connections.map(async (c) => [c.name, await probe(probeRequest(c).url, probeRequest(c).headers)] as const));
  cached = { at: now, signature, providers: Object.fromEntries(results) };
  return cached.providers;
}
