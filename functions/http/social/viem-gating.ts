/** What token gating uses of viem, loaded on the first gating check with a gating token set, not at init. */
export { erc20Abi, getAddress } from 'viem';
export { getChainId, readContract } from 'viem/actions';
