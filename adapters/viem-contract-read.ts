/** viem's contract read, loaded by eas.ts on the first attestation read, not at init. */
export { readContract } from 'viem/actions';
