/** An EVM address as every schema and setting accepts it: `0x` and 20 bytes of hex, any case (checksums are checked where they matter). */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The same 20 bytes inside a longer pattern (a `SYMBOL:0x…:decimals` token setting). */
export const EVM_ADDRESS_SOURCE = EVM_ADDRESS.source.slice(1, -1);
