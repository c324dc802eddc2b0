import type { createRemoteJWKSet } from 'jose';
import { Fid } from '#contract/social';
import { socialConfig } from '#platform/config';
import { unauthenticated, unavailable } from '#platform/errors';
import { logger } from '#http/logger';

/**
 * The social provider's identity token: a JWT signed with one of the keys of its JWKS (fetched and
 * cached by jose), with its issuer, our audience and an expiry; `sub` is the fid. Only asymmetric
 * algorithms are accepted, so neither `alg: none` nor an HMAC keyed with a public key can pass.
 */
const ALGORITHMS = ['EdDSA', 'Ed25519', 'ES256', 'ES384', 'RS256', 'PS256'];
const JWKS_TIMEOUT_MS = 3000;

const jwksByUrl = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

async function jwks(url: string) {
  let set = jwksByUrl.get(url);
  if (!set) {
    const { createRemoteJWKSet } = await import('./jose-remote');
    set = createRemoteJWKSet(new URL(url), { timeoutDuration: JWKS_TIMEOUT_MS });
    jwksByUrl.set(url, set);
  }
  return set;
}

const invalid = () => unauthenticated('fidToken does not verify', 'FID_TOKEN_INVALID');

/** Failures of fetching the key set, as opposed to a token that does not hold. */
const providerDown = (errors: typeof import('./jose-remote'), err: unknown) =>
  err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError) || err.code === 'ERR_JOSE_GENERIC';

/** Returns the fid the token proves. */
export async function verifyFidToken(token: string): Promise<string> {
  const { jwksUrl, issuer, audience } = socialConfig();
  if (!jwksUrl || !issuer) throw unavailable('social sign-in is not configured', 'SOCIAL_NOT_CONFIGURED');
  const jose = await import('./jose-remote');
  let sub: unknown;
  try {
    ({
      payload: { sub },
    } = await jose.jwtVerify(token, await jwks(jwksUrl), { issuer, audience, algorithms: ALGORITHMS, requiredClaims: ['exp', 'sub'] }));
  } catch (err) {
    if (providerDown(jose, err)) {
      logger().warn('social provider key set unavailable', { error: (err as Error).name });
      throw unavailable('the social identity provider cannot be reached; try again', 'SOCIAL_PROVIDER_UNAVAILABLE');
    }
    throw invalid();
  }
  // The provider writes the fid as a number or a numeric string.
  const fid = typeof sub === 'number' ? String(sub) : sub;
  if (typeof fid !== 'string' || !Fid().safeParse(fid).success) throw invalid();
  return fid;
}
