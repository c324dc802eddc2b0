import type { Hex } from 'viem';
import { chainClient } from './chain';

/**
 * The address an ENS name resolves to (ENSIP-10 through the Universal Resolver), or null when it
 * resolves to nothing. Throws on a name that does not normalise (the caller says 400) or an RPC
 * that cannot answer (503).
 */
export async function resolveEnsName(opts: { rpcUrl: string; timeoutMs: number; universalResolver: Hex; name: string }): Promise<Hex | null> {
  const { getEnsAddress, normalize } = await import('./viem-ens');
  return getEnsAddress(await chainClient(opts.rpcUrl, opts.timeoutMs), { name: normalize(opts.name), universalResolverAddress: opts.universalResolver });
}
