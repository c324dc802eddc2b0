/** viem's ENS resolution and name normalisation (with its ~36 KB Unicode tables), loaded on the first ENS look-up (issue 16). */
export { getEnsAddress } from 'viem/actions';
export { normalize } from 'viem/ens';
