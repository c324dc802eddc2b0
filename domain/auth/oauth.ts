import { timingSafeEqual } from 'node:crypto';
import {
  oauthProvider,
  oauthSdk,
  ProviderError,
  requestOptions,
  type OAuthProvider,
  type OAuthProviderName,
  type ProviderProfile,
} from '#adapters/oauth-providers';
import { config } from '#platform/config';
import { consumeSingleUse, issueSingleUse } from '#data/single-use';
import { serializeCookie } from './cookies';
import { DomainError } from '#platform/errors';
import { logger } from '#platform/logger';

/**
 * The authorization-code flow with PKCE (S256) and state. The state item (data/single-use.ts) keeps the
 * PKCE verifier and the callback path server-side and is consumed by one conditional delete, so a
 * state works once. The state is also put in an HttpOnly cookie, and the callback must present
 * both: a callback URL lured onto someone else's browser (login CSRF) does not carry its cookie.
 */
export const OAUTH_STATE_COOKIE = 'oauth_state';
export const OAUTH_STATE_TTL_SECONDS = 600;

interface StateRecord {
  provider: OAuthProviderName;
  codeVerifier: string;
  callbackUrl: string;
}

export const notConfigured = (name: OAuthProviderName) => new DomainError('unavailable', `${name} sign-in is not configured`, 'OAUTH_NOT_CONFIGURED');

const stateInvalid = () => new DomainError('invalid', 'unknown, expired or already used OAuth state', 'OAUTH_STATE_INVALID');

export function configuredProvider(name: OAuthProviderName): OAuthProvider {
  const provider = oauthProvider(name);
  if (!provider) throw notConfigured(name);
  return provider;
}

/** The provider sends the browser back here; it is what the operator registers with the provider. */
export const redirectUri = (name: OAuthProviderName) => new URL(`/api/auth/callback/${name}`, config().appUrl).href;

const stateCookie = (value: string, maxAgeSeconds: number) =>
  serializeCookie(OAUTH_STATE_COOKIE, value, { maxAgeSeconds, httpOnly: true, secure: config().cookieSecure });

export const clearStateCookie = () => stateCookie('', 0);

/** Stores a fresh state and answers where to send the browser, with the state cookie to set. */
export async function beginAuthorization(name: OAuthProviderName, callbackUrl: string, now = Date.now()) {
  const provider = configuredProvider(name);
  const oauth = await oauthSdk();
  const state = oauth.generateRandomState();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const record: StateRecord = { provider: name, codeVerifier, callbackUrl };
  await issueSingleUse('oauthState', state, record, Math.floor(now / 1000) + OAUTH_STATE_TTL_SECONDS);
  const url = new URL(provider.as.authorization_endpoint!);
  url.searchParams.set('client_id', provider.client.client_id);
  url.searchParams.set('redirect_uri', redirectUri(name));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', provider.scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { location: url.href, cookie: stateCookie(state, OAUTH_STATE_TTL_SECONDS) };
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function consumeState(name: OAuthProviderName, state: string, now: number): Promise<StateRecord> {
  const record = await consumeSingleUse<StateRecord>('oauthState', state, now, { provider: name });
  if (!record) throw stateInvalid();
  return record;
}

export type CallbackOutcome =
  | { ok: true; profile: ProviderProfile; callbackUrl: string }
  /** The user declined at the provider, or it sent no code: no session, back to the sign-in page. */
  | { ok: false; reason: string };

/**
 * Checks the state (cookie and stored item, consumed), exchanges the code with the PKCE verifier,
 * and reads the user's profile. Bad state → 400; a provider that fails → 502.
 */
export async function completeAuthorization(
  name: OAuthProviderName,
  query: Record<string, string | undefined>,
  cookieState: string | undefined,
  now = Date.now(),
): Promise<CallbackOutcome> {
  const provider = configuredProvider(name);
  const state = query.state ?? '';
  if (!cookieState || !sameText(cookieState, state)) throw stateInvalid();
  const record = await consumeState(name, state, now);
  if (query.error || !query.code) return { ok: false, reason: query.error ?? 'no code' };

  const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  const oauth = await oauthSdk();
  try {
    const checked = oauth.validateAuthResponse(provider.as, provider.client, params, state);
    const response = await oauth.authorizationCodeGrantRequest(
      provider.as,
      provider.client,
      await provider.clientAuth(),
      checked,
      redirectUri(name),
      record.codeVerifier,
      await requestOptions(),
    );
    const tokens = await oauth.processAuthorizationCodeResponse(provider.as, provider.client, response);
    const profile = await provider.fetchProfile(tokens);
    return { ok: true, profile, callbackUrl: record.callbackUrl };
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) return { ok: false, reason: err.error };
    if (err instanceof DomainError) throw err;
    // Whatever went wrong at the provider (refused code, timeout, malformed answer), never a 500.
    logger().warn('OAuth provider exchange failed', {
      provider: name,
      error:
        err instanceof ProviderError || err instanceof oauth.ResponseBodyError || err instanceof oauth.OperationProcessingError
          ? err.message
          : (err as Error).name,
    });
    throw new DomainError('upstreamFailed', `${name} sign-in failed at the provider`, 'OAUTH_PROVIDER_ERROR');
  }
}
