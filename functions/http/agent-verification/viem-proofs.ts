/** What the wallet proofs of verify.ts use of viem, loaded on the first such proof, not at init. */
export { getAddress, isHex, recoverMessageAddress } from 'viem';
export { normalize } from 'viem/ens';
