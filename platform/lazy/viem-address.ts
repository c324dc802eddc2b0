/**
 * viem's EIP-55 address check and checksum (keccak-256 underneath), loaded where an answer first
 * needs one, so the routes that never show or check an address do not load viem.
 */
export { getAddress, isAddress } from 'viem';
