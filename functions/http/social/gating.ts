import { chainClient } from '#adapters/chain';
import { chainConfig, gatingConfig } from '#platform/config';
import { forbidden, internal, unavailable } from '#platform/errors';
import { logger } from '#http/logger';

/** Token gating reads balances on the L2 main network (Base, chain 8453). */
export const GATING_CHAIN = 'l2-main';
export const GATING_CHAIN_ID = 8453;

export interface GatingResult {
  /** Whether gating is on; when off everyone has access. */
  tokenGated: boolean;
  hasAccess: boolean;
  minBalance: string;
  token: string;
  chain: typeof GATING_CHAIN;
  contractAddress: `0x${string}` | null;
}

// 503 as every other chain read (wallet sign-in, agent verification): the RPC's outage, retryable, not our bug.
const chainUnavailable = () => unavailable('the token balance cannot be read right now; try again', 'CHAIN_UNAVAILABLE');

/** An RPC of another network would answer balances of the wrong token; its id is asked once per container. */
const checkedRpcs = new Set<string>();

async function assertGatingChain(rpcUrl: string, timeoutMs: number): Promise<void> {
  if (checkedRpcs.has(rpcUrl)) return;
  const { getChainId } = await import('./viem-gating');
  let chainId: number;
  try {
    chainId = await getChainId(await chainClient(rpcUrl, timeoutMs));
  } catch {
    throw chainUnavailable();
  }
  if (chainId !== GATING_CHAIN_ID) {
    logger().error('gating RPC serves the wrong chain', { chainId, expected: GATING_CHAIN_ID });
    throw internal('token gating is misconfigured', 'CHAIN_MISMATCH');
  }
  checkedRpcs.add(rpcUrl);
}

export async function gatingFacts(): Promise<Omit<GatingResult, 'hasAccess'>> {
  const g = gatingConfig();
  return {
    tokenGated: !!g.tokenAddress,
    minBalance: g.minBalance,
    token: g.tokenSymbol,
    chain: GATING_CHAIN,
    contractAddress: g.tokenAddress ? (await import('./viem-gating')).getAddress(g.tokenAddress.toLowerCase()) : null,
  };
}

/** Whether `address` holds at least the minimum balance of the gating token (ERC-20 `balanceOf`). */
export async function checkGating(address: string): Promise<GatingResult> {
  const facts = await gatingFacts();
  if (!facts.contractAddress) return { ...facts, hasAccess: true };
  const { rpcUrl } = gatingConfig();
  if (!rpcUrl) throw chainUnavailable();
  const timeoutMs = chainConfig().rpcTimeoutMs;
  await assertGatingChain(rpcUrl, timeoutMs);
  const { erc20Abi, getAddress, readContract } = await import('./viem-gating');
  let balance: bigint;
  try {
    balance = await readContract(await chainClient(rpcUrl, timeoutMs), {
      address: facts.contractAddress,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [getAddress(address.toLowerCase())],
    });
  } catch (err) {
    logger().warn('gating balance read failed', { error: (err as Error).name });
    throw chainUnavailable();
  }
  return { ...facts, hasAccess: balance >= BigInt(facts.minBalance) };
}

/** The 403 of a failed gating check, with the spec's `required` and `minBalance`. */
export const gatingFailed = (g: GatingResult) =>
  forbidden('token gating failed: the wallet does not hold enough of the gating token', 'TOKEN_GATING_FAILED', {
    required: `at least ${g.minBalance} of ${g.token} on ${g.chain}`,
    minBalance: g.minBalance,
  });
