import { generateApiKey } from '#platform/crypto/api-keys';
import { generateKeyPair, SignJWT } from 'jose';
import { config } from '#platform/config';

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

function claims(userId: string, now = Math.floor(Date.now() / 1000)) {
  const c = config().jwt;
  return { sub: userId, userId, email: `${userId}@example.com`, role: 'user', iss: c.issuer, aud: c.audience, iat: now, exp: now + 3600, jti: 'j1' };
}

/** Every way a bearer token can be wrong; each must give 401 TOKEN_INVALID, never a 500. */
export async function badTokens(userId = 'u_forged'): Promise<Record<string, string>> {
  const secret = new TextEncoder().encode(config().jwt.secret!);
  const otherSecret = new TextEncoder().encode('a-completely-different-secret-of-enough-length!!');
  const now = Math.floor(Date.now() / 1000);
  const { privateKey } = await generateKeyPair('RS256');
  const c = claims(userId);
  return {
    forged: await new SignJWT(c).setProtectedHeader({ alg: 'HS256' }).sign(otherSecret),
    expired: await new SignJWT({ ...c, iat: now - 8 * 86400, exp: now - 86400 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    algNone: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(c)}.`,
    wrongAlgHs512: await new SignJWT(c).setProtectedHeader({ alg: 'HS512' }).sign(secret),
    rs256: await new SignJWT(c).setProtectedHeader({ alg: 'RS256' }).sign(privateKey),
    wrongAudience: await new SignJWT({ ...c, aud: 'someone-else' }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    missingSub: await new SignJWT({ ...c, sub: undefined }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    tamperedPayload: await (async () => {
      const good = await new SignJWT(c).setProtectedHeader({ alg: 'HS256' }).sign(secret);
      const [h, , s] = good.split('.');
      return `${h}.${b64({ ...c, role: 'admin', email: 'admin@example.com' })}.${s}`;
    })(),
    // Signed with the real secret but dated years ahead / living a century: both would outlast any revocation.
    futureIssued: await new SignJWT({ ...c, iat: now + 5 * 365 * 86400, exp: now + 5 * 365 * 86400 + 3600 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    centuryLifetime: await new SignJWT({ ...c, exp: now + 100 * 365 * 86400 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    issueTimeAhead: await new SignJWT({ ...c, iatMs: (now + 5 * 365 * 86400) * 1000 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
    malformed: 'not.a.jwt',
    garbage: '%%%',
    // Random each run: a fixed value could be stored as a real key by some other test.
    unknownApiKey: generateApiKey(),
  };
}
