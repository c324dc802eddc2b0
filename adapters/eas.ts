import type { Hex } from 'viem';
import { chainClient } from './chain';

/** `getAttestation(bytes32)` of the Ethereum Attestation Service contract; unknown UIDs answer an all-zero attestation. */
export const easAbi = [
  {
    type: 'function',
    name: 'getAttestation',
    stateMutability: 'view',
    inputs: [{ name: 'uid', type: 'bytes32' }],
    outputs: [
      {
        name: '',
        type: 'tuple',
        components: [
          { name: 'uid', type: 'bytes32' },
          { name: 'schema', type: 'bytes32' },
          { name: 'time', type: 'uint64' },
          { name: 'expirationTime', type: 'uint64' },
          { name: 'revocationTime', type: 'uint64' },
          { name: 'refUID', type: 'bytes32' },
          { name: 'recipient', type: 'address' },
          { name: 'attester', type: 'address' },
          { name: 'revocable', type: 'bool' },
          { name: 'data', type: 'bytes' },
        ],
      },
    ],
  },
] as const;

export interface Attestation {
  uid: Hex;
  schema: Hex;
  time: bigint;
  expirationTime: bigint;
  revocationTime: bigint;
  refUID: Hex;
  recipient: Hex;
  attester: Hex;
  revocable: boolean;
  data: Hex;
}

/** Reads one attestation; throws when the RPC cannot be reached or answers an error (the caller says 503). */
export async function readAttestation(opts: { rpcUrl: string; timeoutMs: number; contract: Hex; uid: Hex }): Promise<Attestation> {
  const { readContract } = await import('./viem-contract-read');
  return readContract(await chainClient(opts.rpcUrl, opts.timeoutMs), {
    address: opts.contract,
    abi: easAbi,
    functionName: 'getAttestation',
    args: [opts.uid],
  });
}

/** Coinbase Verifications' attestation indexer (github.com/coinbase/verifications, IAttestationIndexer): the latest attestation UID of a recipient under a schema. */
export const attestationIndexerAbi = [
  {
    type: 'function',
    name: 'getAttestationUid',
    stateMutability: 'view',
    inputs: [
      { name: 'recipient', type: 'address' },
      { name: 'schemaUid', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bytes32' }],
  },
] as const;

/** The indexed attestation UID (all zeros when there is none); throws when the RPC cannot answer. */
export async function readIndexedAttestationUid(opts: { rpcUrl: string; timeoutMs: number; indexer: Hex; recipient: Hex; schemaUid: Hex }): Promise<Hex> {
  const { readContract } = await import('./viem-contract-read');
  return readContract(await chainClient(opts.rpcUrl, opts.timeoutMs), {
    address: opts.indexer,
    abi: attestationIndexerAbi,
    functionName: 'getAttestationUid',
    args: [opts.recipient, opts.schemaUid],
  });
}
