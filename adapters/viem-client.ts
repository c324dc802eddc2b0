/** viem's client and HTTP transport, loaded by chain.ts on a container's first chain call, not at init. */
export { createClient, http } from 'viem';
