/** The version of this reference runtime; a launcher may label an instance with its own (RUNTIME_VERSION). */
export const BUILT_IN_VERSION = '1.0.0';
