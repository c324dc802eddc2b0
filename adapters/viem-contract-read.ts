/** viem's contract read, loaded by eas.ts on the first attestation read (issue 16). */
export { readContract } from 'viem/actions';
