/** viem's ENS resolution and name normalisation (with its large Unicode tables), loaded on the first ENS look-up, not at init. */
export { getEnsAddress } from 'viem/actions';
export { normalize } from 'viem/ens';
