/**
 * What the wallet skills (usdc-payments, instant-split, treasury and wallet-transfer.ts) use of
 * viem, loaded on the first action that needs it: the registry is static, so without this every
 * skill call of a container would load viem and secp256k1.
 */
export { encodeFunctionData, erc20Abi, formatUnits, getAddress, isAddress, keccak256, parseUnits, zeroAddress } from 'viem';
export { privateKeyToAccount } from 'viem/accounts';
export {
  estimateGas,
  getBalance,
  getChainId,
  getGasPrice,
  getTransactionCount,
  getTransactionReceipt,
  readContract,
  sendRawTransaction,
} from 'viem/actions';
