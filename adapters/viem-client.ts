/** viem's client and HTTP transport, loaded by chain.ts on a container's first chain call (issue 16). */
export { createClient, http } from 'viem';
