/** hash-wasm's argon2id, imported by ./passwords.ts on the first password hashed or checked, not at init. */
export { argon2id, argon2Verify } from 'hash-wasm';
