import { type OAuthProviderName, oauthProvider, type ProviderProfile } from '#adapters/oauth-providers';
import { signInWithIdentity, type ExternalIdentity } from '#domain/auth/linked-identity';
import { beginAuthorization, clearStateCookie, completeAuthorization, OAUTH_STATE_COOKIE } from '#domain/auth/oauth';
import { startSession } from '#domain/auth/sign-in';
import { config, emailConfig } from '#platform/config';
import { LOCAL_MAIL_PAGE } from '#contract/console';
import type { oauthSignInContract } from '#contract/oauth-sign-in';
import { loginItems, loginLookup } from '#data/users';
import type { Operations } from '#http/pipeline';
import { DomainError } from '#platform/errors';
import { reply } from '#http/reply';

type OAuthSignInOps = Operations<typeof oauthSignInContract>;

/** Where a failed or declined provider sign-in lands (the contract's documented target). */
const OAUTH_FAILURE_PATH = '/signin?error=OAuthCallback';

/** Where a provider sign-in lands when an account with an unconfirmed copy of its email exists (not linked: see linked-identity.ts). */
const OAUTH_UNVERIFIED_PATH = '/signin?error=EmailUnverified';

const appLocation = (path: string) => new URL(path, config().appUrl).href;

/**
 * The account email of a provider identity: the address the provider verified, or, without one,
 * an address derived from the identity (`<provider>-<subject>@oauth.local`), which never links to
 * anyone else's account.
 */
function identityOf(provider: OAuthProviderName, profile: ProviderProfile): ExternalIdentity {
  const login = { provider, subject: profile.subject };
  const verified = profile.emailVerified && !!profile.email;
  return {
    lookup: loginLookup(login),
    linkItems: (userId) => loginItems(userId, login),
    login,
    email: verified ? profile.email! : `${provider}-${profile.subject.toLowerCase()}@oauth.local`,
    linkByEmail: verified,
    emailVerified: verified,
    name: profile.name,
    method: provider,
  };
}

const start = (provider: OAuthProviderName) => async (ctx: { query: { callbackUrl?: string } }) => {
  const { location, cookie } = await beginAuthorization(provider, ctx.query.callbackUrl ?? '/');
  return reply.redirect(location, 302, [cookie]);
};

const callback = (provider: OAuthProviderName) => async (ctx: { query: { code?: string; state: string; error?: string }; cookies: Record<string, string> }) => {
  const outcome = await completeAuthorization(provider, ctx.query, ctx.cookies[OAUTH_STATE_COOKIE]);
  if (!outcome.ok) return reply.redirect(appLocation(OAUTH_FAILURE_PATH), 302, [clearStateCookie()]);
  let user;
  try {
    ({ user } = await signInWithIdentity(identityOf(provider, outcome.profile)));
  } catch (err) {
    if (err instanceof DomainError && err.code === 'EMAIL_UNVERIFIED') return reply.redirect(appLocation(OAUTH_UNVERIFIED_PATH), 302, [clearStateCookie()]);
    throw err;
  }
  const session = await startSession(user);
  return reply.redirect(appLocation(outcome.callbackUrl), 302, [...session.cookies, clearStateCookie()]);
};

const OAUTH_PROVIDERS: OAuthProviderName[] = ['codehost', 'webid'];

/** Sign-in pages load this on every visit: a few minutes of caching is harmless, configuration changes need a deploy. */
const PROVIDERS_CACHE_CONTROL = 'public, max-age=300';

/** The local stack also names its mail page: it sends no mail, so the console links there for the confirmation link. */
const listSignInProviders = async () =>
  reply.json(
    200,
    {
      oauthProviders: OAUTH_PROVIDERS.filter((name) => oauthProvider(name) !== undefined),
      ...(emailConfig().outboxPage ? { localMailUrl: LOCAL_MAIL_PAGE } : {}),
    },
    { 'cache-control': PROVIDERS_CACHE_CONTROL },
  );

export const oauthOperations: OAuthSignInOps = {
  listSignInProviders,
  startCodehostOAuth: start('codehost'),
  startWebidOAuth: start('webid'),
  codehostOAuthCallback: callback('codehost'),
  webidOAuthCallback: callback('webid'),
};
