/** viem's balance read, loaded on the first balance a container shows, not at init. */
export { formatEther } from 'viem';
export { getBalance } from 'viem/actions';
