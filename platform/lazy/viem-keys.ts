/** viem's secp256k1 accounts and hex helpers, loaded by domain/wallets/keys.ts when a key is made or opened. */
export { bytesToHex, hexToBytes } from 'viem';
export { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
