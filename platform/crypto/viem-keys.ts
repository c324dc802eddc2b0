/** viem's secp256k1 accounts and hex helpers, loaded by wallet-keys.ts when a key is made or opened (issue 16). */
export { bytesToHex, hexToBytes } from 'viem';
export { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
