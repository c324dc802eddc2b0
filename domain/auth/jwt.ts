import { config } from '#platform/config';

export const JWT_ALGORITHM = 'HS256';
export const JWT_LIFETIME_SECONDS = 7 * 24 * 3600;
/** How far ahead of our clock a token's issue time may be (clocks of containers differ a little). */
const CLOCK_SKEW_SECONDS = 60;

export interface SessionClaims {
  /** userId; also in `sub`. */
  userId: string;
  email: string;
  role: 'user' | 'admin';
  /** The account's address was proven when the token was issued (admin and tester rights need it). */
  emailVerified: boolean;
  /** Token id: binds the CSRF token to this session. */
  jti: string;
  iat: number;
  /** Issue time in milliseconds: session revocation compares at this precision. */
  iatMs: number;
  exp: number;
}

/** The secret is missing: a deployment fault, answered as the spec's 500 AUTH_ERROR. */
export class AuthConfigError extends Error {}
/** Forged, expired, wrong algorithm, malformed: all the spec's 401 TOKEN_INVALID. */
export class TokenInvalidError extends Error {}

let secretKey: { raw: string; key: Uint8Array } | undefined;
function key(): Uint8Array {
  const raw = config().jwt.secret;
  if (!raw) throw new AuthConfigError('JWT_SECRET is not configured');
  if (secretKey?.raw !== raw) secretKey = { raw, key: new TextEncoder().encode(raw) };
  return secretKey.key;
}

/** `lifetimeSeconds` is at most the 7 days of spec section 5; shorter for the social session (86400 s). */
export async function issueSessionToken(
  user: { userId: string; email: string; role: 'user' | 'admin'; emailVerified?: boolean },
  now = Date.now(),
  lifetimeSeconds = JWT_LIFETIME_SECONDS,
) {
  const lifetime = Math.min(lifetimeSeconds, JWT_LIFETIME_SECONDS);
  const c = config().jwt;
  const iat = Math.floor(now / 1000);
  const jti = crypto.randomUUID();
  const { SignJWT } = await import('./jose-jwt');
  const token = await new SignJWT({ userId: user.userId, email: user.email, role: user.role, emailVerified: user.emailVerified === true, iatMs: now })
    .setProtectedHeader({ alg: JWT_ALGORITHM, typ: 'JWT' })
    .setSubject(user.userId)
    .setIssuer(c.issuer)
    .setAudience(c.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime)
    .setJti(jti)
    .sign(key());
  return { token, jti, expiresAt: iat + lifetime };
}

/**
 * Tokens this container has verified, with their claims: the signature of a given string under a
 * given secret checks the same every time, so a warm container repeats only the expiry check. The
 * HMAC through WebCrypto was the largest part of a warm request's own CPU above the floor
 * (GET /api/agents under bench/profile-warm.ts). Revocation is not cached here: the session gate
 * judges every request. Keyed by the whole token; dropped when the settings change.
 */
const verifiedTokens = new Map<string, SessionClaims>();
const VERIFIED_TOKENS_MAX = 1000;
let verifiedUnder: ReturnType<typeof config>['jwt'] | undefined;

export async function verifySessionToken(token: string): Promise<SessionClaims> {
  const c = config().jwt;
  if (verifiedUnder !== c) {
    verifiedTokens.clear();
    verifiedUnder = c;
  }
  const known = verifiedTokens.get(token);
  if (known) {
    // What jwtVerify checks that time changes: the expiry (its other checks held when first verified and cannot stop holding).
    if (known.exp > Math.floor(Date.now() / 1000)) return { ...known };
    verifiedTokens.delete(token);
  }
  const claims = await verifyTokenSignatureAndClaims(token, key(), c);
  if (verifiedTokens.size >= VERIFIED_TOKENS_MAX) verifiedTokens.clear();
  verifiedTokens.set(token, claims);
  return { ...claims };
}

async function verifyTokenSignatureAndClaims(token: string, k: Uint8Array, c: ReturnType<typeof config>['jwt']): Promise<SessionClaims> {
  const { jwtVerify } = await import('./jose-jwt');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, k, {
      algorithms: [JWT_ALGORITHM],
      issuer: c.issuer,
      audience: c.audience,
      requiredClaims: ['exp', 'iat', 'sub', 'iss', 'aud', 'jti'],
    }));
  } catch {
    throw new TokenInvalidError('invalid or expired token');
  }
  const { sub, userId, email, role, jti, iat, exp, iatMs, emailVerified } = payload;
  if (typeof sub !== 'string' || sub !== userId || typeof email !== 'string' || (role !== 'user' && role !== 'admin') || typeof jti !== 'string') {
    throw new TokenInvalidError('invalid token claims');
  }
  // A token dated ahead would outlive every revocation (they compare issue times); one with a longer lifetime than ours was not made by us.
  const nowSeconds = Math.floor(Date.now() / 1000);
  if (typeof iat !== 'number' || typeof exp !== 'number' || iat > nowSeconds + CLOCK_SKEW_SECONDS || exp - iat > JWT_LIFETIME_SECONDS) {
    throw new TokenInvalidError('invalid token lifetime');
  }
  if (iatMs !== undefined && (typeof iatMs !== 'number' || Math.abs(iatMs - iat * 1000) >= 1000)) throw new TokenInvalidError('invalid token issue time');
  const issuedMs = typeof iatMs === 'number' ? iatMs : iat * 1000;
  return { userId: sub, email, role, emailVerified: emailVerified === true, jti, iat, iatMs: issuedMs, exp };
}
