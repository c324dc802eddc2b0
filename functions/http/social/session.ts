import { createHash, randomBytes } from 'node:crypto';
import { sessionIdentity } from '#domain/auth/authenticate';
import { issueSessionToken } from '#domain/auth/jwt';
import { signInWithIdentity, type ExternalIdentity } from '#domain/auth/linked-identity';
import { sessionIsValid } from '#domain/auth/session-gate';
import { SOCIAL_SESSION_TTL_SECONDS } from '#contract/social';
import { consumeSingleUse, issueSingleUse } from '#data/single-use';
import { getUser, socialLoginItems, socialLookup, type UserProfile } from '#data/users';
import { unauthenticated } from '#platform/errors';

/**
 * The social session: a platform session JWT (86400 s), handed over as base64 as the spec shows,
 * and a rotating refresh token. Refresh tokens are 32 random bytes; only their SHA-256 is stored
 * (`SOCIALREFRESH#<hash>`, 30-day TTL), each is consumed by one conditional delete, and one issued
 * before the account's sessions were revoked (password change or reset) no longer works.
 */
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;

export type AccessLevel = 'basic' | 'token-holder';

interface RefreshRecord {
  userId: string;
  fid: string;
  address: string | null;
  accessLevel: AccessLevel;
  /** When the session this token continues was first verified (ms); compared with the revocation gate. */
  issuedAtMs: number;
  expiresAt: number;
}

/** The fid's account email, derived so it can never collide with a real address. */
export const socialEmail = (fid: string) => `fid-${fid}@social.local`;

export function socialIdentity(fid: string): ExternalIdentity {
  return {
    lookup: socialLookup(fid),
    linkItems: (userId) => socialLoginItems(userId, fid),
    email: socialEmail(fid),
    // As with wallets (spec 4.1 rule 2), an account holding the derived address is the fid's: it is
    // how a first sign-in interrupted between creating the account and linking the fid recovers.
    linkByEmail: true,
    name: `fid ${fid}`,
    method: 'social',
  };
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

async function sessionTokenFor(user: UserProfile): Promise<string> {
  const { token } = await issueSessionToken(sessionIdentity(user), Date.now(), SOCIAL_SESSION_TTL_SECONDS);
  return Buffer.from(token, 'utf8').toString('base64');
}

async function storeRefreshToken(record: Omit<RefreshRecord, 'expiresAt'>, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64');
  await issueSingleUse('socialRefresh', hashToken(token), record, Math.floor(now / 1000) + REFRESH_TTL_SECONDS);
  return token;
}

/** Signs the fid in to its account (created on first use) and opens a social session. */
export async function openSocialSession(fid: string, address: string | null, accessLevel: AccessLevel, now = Date.now()) {
  const { user } = await signInWithIdentity(socialIdentity(fid));
  const sessionToken = await sessionTokenFor(user);
  const refreshToken = await storeRefreshToken({ userId: user.userId, fid, address, accessLevel, issuedAtMs: now }, now);
  return { user, sessionToken, refreshToken };
}

const refreshInvalid = () => unauthenticated('refresh token is invalid, used or expired', 'REFRESH_TOKEN_INVALID');

async function consumeRefreshToken(token: string, now: number): Promise<RefreshRecord> {
  const record = await consumeSingleUse<RefreshRecord>('socialRefresh', hashToken(token), now);
  if (!record) throw refreshInvalid();
  return record;
}

/** Exchanges a refresh token for a new session token and its successor refresh token. */
export async function refreshSocialSession(token: string, now = Date.now()) {
  const record = await consumeRefreshToken(token, now);
  const user = await getUser(record.userId, true);
  if (!user || !(await sessionIsValid(user.userId, '', record.issuedAtMs, now))) throw refreshInvalid();
  const sessionToken = await sessionTokenFor(user);
  const refreshToken = await storeRefreshToken(
    { userId: user.userId, fid: record.fid, address: record.address, accessLevel: record.accessLevel, issuedAtMs: record.issuedAtMs },
    now,
  );
  return { sessionToken, refreshToken };
}
