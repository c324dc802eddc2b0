/** viem's balance read, loaded on the first balance a container shows (issue 16). */
export { formatEther } from 'viem';
export { getBalance } from 'viem/actions';
