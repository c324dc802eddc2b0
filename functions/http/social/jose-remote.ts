/**
 * The part of jose the identity token needs beyond the core's session tokens (the remote key set
 * fetcher and its errors), loaded on the first social sign-in a container serves, not at init. From
 * jose's own entry points, not its index: the index is in the core's chunk, and what it re-exports
 * would be loaded with it.
 */
export { JOSEError, JWKSInvalid, JWKSTimeout } from 'jose/errors';
export { createRemoteJWKSet } from 'jose/jwks/remote';
export { jwtVerify } from 'jose/jwt/verify';
