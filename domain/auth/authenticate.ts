import { MCP_ACCESS_TOKEN_PREFIX } from '#contract/mcp-tokens';
import { isDatabaseUnavailable } from '#data/failures';
import { findApiKeyWithAccount, knownKeyOwner, touchApiKeyLastUsed } from '#data/api-keys';
import { isGatewayReceiptToken } from '#data/gateway-receipts';
import { getUser } from '#data/users';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';
import { hashApiKey, looksLikeApiKey } from '#platform/crypto/api-keys';
import { AuthConfigError, TokenInvalidError, verifySessionToken, type SessionClaims } from './jwt';
import { accountRights, isListedAddress } from './rights';
import { sessionIsValid } from './session-gate';

export interface AuthContext {
  userId: string;
  email: string;
  isAdmin: boolean;
  isTester: boolean;
  /** How the caller proved who they are; CSRF applies only to `cookie`. */
  via: 'cookie' | 'bearer' | 'apiKey';
  /** Session token id (JWT `jti`) for cookie and bearer sessions. */
  sessionId?: string;
  /** Issued-at of the session token, seconds (for "fresh session" checks). */
  issuedAt?: number;
  apiKeyId?: string;
}

/** The spec's section 5 outcomes; the pipeline maps them to status codes. */
export type AuthFailure = 'AUTH_REQUIRED' | 'TOKEN_INVALID' | 'AUTH_ERROR';
export class AuthFailureError extends DomainError {
  declare readonly code: AuthFailure;
  constructor(code: AuthFailure, message: string) {
    super(code === 'AUTH_ERROR' ? 'internal' : 'unauthenticated', message, code);
  }
}

/** Admin and tester rights belong to a listed address only once the account has proven it (./rights.ts). */
function contextFor(userId: string, email: string, emailVerified: boolean, via: AuthContext['via'], extra: Partial<AuthContext>): AuthContext {
  return { userId, email, ...accountRights({ email, emailVerified }), via, ...extra };
}

/** What a session token says of its account; `role` is `admin` only for a proven admin address. */
export const sessionIdentity = (user: { userId: string; email: string; emailVerified?: boolean }) => ({
  userId: user.userId,
  email: user.email,
  role: accountRights(user).isAdmin ? ('admin' as const) : ('user' as const),
  emailVerified: user.emailVerified === true,
});

/**
 * The account as it is now, for credentials that do not carry it: API keys, and sessions issued
 * before a listed address was proven. A missing profile is a deleted account.
 */
async function currentAccount(userId: string): Promise<{ email: string; emailVerified: boolean }> {
  const user = await getUser(userId, true);
  if (!user) throw new AuthFailureError('TOKEN_INVALID', 'the account no longer exists');
  return { email: user.email, emailVerified: user.emailVerified === true };
}

/** `lastUsed` is bookkeeping: a failure to record it must never refuse a valid key. */
async function recordApiKeyUse(userId: string, keyId: string): Promise<void> {
  try {
    await touchApiKeyLastUsed(userId, keyId);
  } catch (err) {
    logger().debug('could not record API key use', { keyId, error: (err as Error)?.name });
  }
}

async function verifiedSession(token: string): Promise<SessionClaims> {
  const claims = await verifySessionToken(token);
  if (!(await sessionIsValid(claims.userId, claims.jti, claims.iatMs))) throw new AuthFailureError('TOKEN_INVALID', 'session has been revoked');
  return claims;
}

/**
 * A session's email is current (an email change revokes every session). Its proof is read again
 * only for a listed address whose token predates the proof, so the rights follow at once.
 */
async function sessionContext(claims: SessionClaims, via: 'cookie' | 'bearer'): Promise<AuthContext> {
  let verified = claims.emailVerified;
  if (!verified && isListedAddress(claims.email)) {
    const now = await currentAccount(claims.userId);
    verified = now.emailVerified && now.email === claims.email.toLowerCase();
  }
  return contextFor(claims.userId, claims.email, verified, via, { sessionId: claims.jti, issuedAt: claims.iat });
}

/**
 * Resolves the caller from `Authorization: Bearer <jwt|sk_key>` or the session cookie.
 * Returns undefined when no credential of ours was presented (the route decides whether that is
 * fine); throws AuthFailureError for a credential that does not hold.
 * `Authorization: Payment ...` (MPP) and `Bearer gwr_...` (a gateway card receipt) are not ours to judge: they are passed over here.
 */
export async function authenticate(authorization: string | undefined, sessionCookie: string | undefined): Promise<AuthContext | undefined> {
  try {
    if (authorization && /^bearer\s/i.test(authorization)) {
      const token = authorization.replace(/^bearer\s+/i, '').trim();
      if (!token) throw new AuthFailureError('TOKEN_INVALID', 'empty bearer token');
      // A prepaid gateway card receipt is a payment, not a session: the gateway judges it.
      if (isGatewayReceiptToken(token)) return undefined;
      // An MCP OAuth access token is bound to the MCP server (its audience): the MCP route judges it, no other route takes it.
      if (token.startsWith(MCP_ACCESS_TOKEN_PREFIX)) return undefined;
      if (looksLikeApiKey(token)) {
        const keyHash = hashApiKey(token);
        // A key this container resolved before records its use beside the look-up, not after it.
        const owner = knownKeyOwner(keyHash);
        const earlyUse = owner && recordApiKeyUse(owner.userId, owner.keyId);
        // Consistent reads: a deleted key or account must stop working on the very next request, in AWS too.
        const found = await findApiKeyWithAccount(keyHash);
        if (!found) throw new AuthFailureError('TOKEN_INVALID', 'invalid API key');
        const { key, account } = found;
        await (earlyUse ?? recordApiKeyUse(key.userId, key.keyId));
        // Judged by the account as it is now, never by the address the key was created under; a missing profile is a deleted account.
        if (!account) throw new AuthFailureError('TOKEN_INVALID', 'the account no longer exists');
        return contextFor(key.userId, account.email, account.emailVerified === true, 'apiKey', { apiKeyId: key.keyId });
      }
      return await sessionContext(await verifiedSession(token), 'bearer');
    }
    if (sessionCookie) return await sessionContext(await verifiedSession(sessionCookie), 'cookie');
    return undefined;
  } catch (err) {
    if (err instanceof AuthFailureError) throw err;
    // A table that did not answer in time is the platform's outage, not a failed sign-in: 503 upstream.
    if (isDatabaseUnavailable(err)) throw err;
    if (err instanceof TokenInvalidError) throw new AuthFailureError('TOKEN_INVALID', 'invalid or expired token');
    if (err instanceof AuthConfigError) throw new AuthFailureError('AUTH_ERROR', 'authentication is not configured');
    throw new AuthFailureError('AUTH_ERROR', 'authentication failed unexpectedly');
  }
}

/** A header that claims a credential scheme we do not accept on session routes (e.g. Basic). */
export const hasForeignAuthorization = (authorization: string | undefined) => !!authorization && !/^bearer\s/i.test(authorization);
