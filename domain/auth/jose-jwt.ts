/**
 * The parts of jose the session tokens use, loaded by domain/auth/jwt.ts on the first token it
 * signs or verifies: routes without a session (health checks, API-key and webhook routes) and the
 * cold start do not parse it.
 */
export { jwtVerify } from 'jose/jwt/verify';
export { SignJWT } from 'jose/jwt/sign';
