import type * as oauth from 'oauth4webapi';
import * as z from 'zod/mini';
import { config, oauthConfig } from '#platform/config';
import { lazySchema } from '#contract/lazy-schema';

/**
 * The two OAuth sign-in providers, spoken through oauth4webapi (standards-only OAuth 2 / OpenID
 * Connect client, no dependencies, Web APIs only). `codehost` is a plain OAuth 2 provider whose user
 * and email-list endpoints are its own REST API; `webid` is OpenID Connect (ID token from the token
 * endpoint, standard userinfo). The endpoints come from config: real providers by default, fakes on
 * loopback in tests.
 */
export type OAuthProviderName = 'codehost' | 'webid';

/** Who the provider says signed in. `email` is only trusted for linking when `emailVerified`. */
export interface ProviderProfile {
  subject: string;
  email?: string;
  emailVerified: boolean;
  name?: string;
}

export interface OAuthProvider {
  name: OAuthProviderName;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  clientAuth(): Promise<oauth.ClientAuth>;
  scope: string;
  fetchProfile(tokens: oauth.TokenEndpointResponse): Promise<ProviderProfile>;
}

/** The provider answered something we cannot use (an error, a malformed body): a 502 for the caller. */
export class ProviderError extends Error {}

/** oauth4webapi, imported on the first start or callback of a container (node caches the module). */
export const oauthSdk = () => import('./oauth-sdk');

/** Transport options of every provider call: bounded in time; plain http only outside AWS (fakes on loopback). */
export async function requestOptions() {
  const c = config();
  const { allowInsecureRequests } = await oauthSdk();
  return {
    signal: () => AbortSignal.timeout(oauthConfig().timeoutMs),
    [allowInsecureRequests]: c.stage !== 'aws',
  };
}

/** The provider's configuration, or undefined while its client id or secret is unset. */
export function oauthProvider(name: OAuthProviderName): OAuthProvider | undefined {
  return name === 'codehost' ? codehost() : webid();
}

const CodehostUser = lazySchema(() =>
  z.object({ id: z.union([z.int(), z.string().check(z.minLength(1))]), login: z.optional(z.string()), name: z.nullish(z.string()) }),
);
const CodehostEmails = lazySchema(() => z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() })));

function codehost(): OAuthProvider | undefined {
  const p = oauthConfig().codehost;
  if (!p.clientId || !p.clientSecret) return undefined;
  const clientSecret = p.clientSecret;
  const as: oauth.AuthorizationServer = {
    issuer: new URL(p.authorizeUrl).origin,
    authorization_endpoint: p.authorizeUrl,
    token_endpoint: p.tokenUrl,
  };
  const client: oauth.Client = { client_id: p.clientId };
  return {
    name: 'codehost',
    as,
    client,
    clientAuth: async () => (await oauthSdk()).ClientSecretPost(clientSecret),
    scope: 'read:user user:email',
    async fetchProfile(tokens) {
      const user = CodehostUser().safeParse(await getJson(tokens.access_token, p.userInfoUrl));
      if (!user.success) throw new ProviderError('user record is malformed');
      const emails = CodehostEmails().safeParse(await getJson(tokens.access_token, p.emailsUrl));
      if (!emails.success) throw new ProviderError('email list is malformed');
      const primary = emails.data.find((e) => e.primary && e.verified);
      return {
        subject: String(user.data.id),
        email: primary?.email,
        emailVerified: !!primary,
        name: user.data.name ?? user.data.login,
      };
    },
  };
}

/** A REST call of the provider's own API with the access token (its user records are not OIDC userinfo). */
async function getJson(accessToken: string, url: string): Promise<unknown> {
  const headers = new Headers({ accept: 'application/json', 'user-agent': 'agent-platform-oauth' });
  const { protectedResourceRequest } = await oauthSdk();
  const res = await protectedResourceRequest(accessToken, 'GET', new URL(url), headers, null, await requestOptions());
  if (!res.ok) throw new ProviderError(`provider answered ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new ProviderError('provider answer is not JSON');
  }
}

function webid(): OAuthProvider | undefined {
  const p = oauthConfig().webid;
  if (!p.clientId || !p.clientSecret) return undefined;
  const clientSecret = p.clientSecret;
  const as: oauth.AuthorizationServer = {
    issuer: p.issuer,
    authorization_endpoint: p.authorizeUrl,
    token_endpoint: p.tokenUrl,
    userinfo_endpoint: p.userInfoUrl,
  };
  const client: oauth.Client = { client_id: p.clientId };
  return {
    name: 'webid',
    as,
    client,
    clientAuth: async () => (await oauthSdk()).ClientSecretBasic(clientSecret),
    scope: 'openid email profile',
    async fetchProfile(tokens) {
      // The ID token (validated by oauth4webapi: issuer, audience, expiry) names the subject userinfo must match.
      const oauth = await oauthSdk();
      const subject = oauth.getValidatedIdTokenClaims(tokens)?.sub;
      const res = await oauth.userInfoRequest(as, client, tokens.access_token, await requestOptions());
      const info = await oauth.processUserInfoResponse(as, client, subject ?? oauth.skipSubjectCheck, res);
      return {
        subject: info.sub,
        email: typeof info.email === 'string' ? info.email : undefined,
        emailVerified: info.email_verified === true,
        name: typeof info.name === 'string' ? info.name : undefined,
      };
    },
  };
}
