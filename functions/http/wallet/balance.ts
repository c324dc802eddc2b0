import { chainClient } from '#adapters/chain';
import { walletConfig } from '#platform/config';
import { BALANCE_UNAVAILABLE } from '#contract/wallet';
import { logger } from '#http/logger';

/**
 * Native balance from the configured chain RPC, in ether units. Unset, down, erroring or slower than
 * the bound: `unavailable`, so a wallet page still answers (never a 500, never a guessed number).
 */
export async function readBalance(address: `0x${string}`): Promise<string> {
  const { rpcUrl, rpcTimeoutMs } = walletConfig();
  if (!rpcUrl) return BALANCE_UNAVAILABLE;
  try {
    const { formatEther, getBalance } = await import('./viem-balance');
    return formatEther(await getBalance(await chainClient(rpcUrl, rpcTimeoutMs), { address }));
  } catch (err) {
    logger().warn('wallet balance unavailable', { reason: (err as Error)?.name ?? 'unknown' });
    return BALANCE_UNAVAILABLE;
  }
}
