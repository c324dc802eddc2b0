import * as z from 'zod/mini';
import { CallbackPath, RedirectBody, SESSION_COOKIE_NOTE } from './account-fields';
import { commonErrorResponses, ErrorBody, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

/** 400s the handler gives itself (beyond the pipeline's validation errors); not exported, so it stays inline in the document. */
const BadRequest = lazySchema(() => z.union([ValidationErrorBody(), ErrorBody()]));

const oauthStart = <const Op extends string>(operation: Op, provider: 'codehost' | 'webid', label: string) => ({
  operation,
  method: 'GET' as const,
  path: `/api/auth/oauth-${provider}`,
  auth: 'none' as const,
  // Each start stores a state item: unauthenticated callers share the sign-in budget per address.
  rateLimit: 'signIn' as const,
  summary: `Start ${label} OAuth sign-in: 302 to the provider's authorisation page.`,
  description:
    `Stores a random \`state\` with the PKCE (S256) verifier and the \`callbackUrl\` server-side for 10 minutes, sets the same state in a short-lived HttpOnly cookie ` +
    `(binding the flow to this browser), and redirects to the provider with \`state\` and \`code_challenge\`. ` +
    `The redirect URI registered with the provider is \`<APP_URL>/api/auth/callback/${provider}\`. ` +
    `503 \`OAUTH_NOT_CONFIGURED\` when the provider's client id or client secret is not configured.`,
  query: () => z.object({ callbackUrl: z.optional(CallbackPath()) }),
  responses: () => ({ 302: RedirectBody(), 503: ErrorBody(), ...commonErrorResponses() }),
});

const oauthCallback = <const Op extends string>(operation: Op, provider: 'codehost' | 'webid', label: string) => ({
  operation,
  method: 'GET' as const,
  path: `/api/auth/callback/${provider}`,
  auth: 'none' as const,
  summary: `${label} OAuth callback: exchanges the code, signs the user in and 302s back to the app.`,
  description:
    `\`state\` must match the state cookie set by the start route and a stored, unexpired, unused state (400 \`OAUTH_STATE_INVALID\` otherwise; a state works once). ` +
    `The code is exchanged with the PKCE verifier. The provider's verified email links to an existing account with the same email on first sign-in instead of creating a duplicate (spec 4.1 rule 1); ` +
    `an existing account whose own address was never confirmed is never linked either (it may be someone who registered the victim's address first): the answer is a 302 to \`/signin?error=EmailUnverified\` without a session, and the address's owner confirms it (emailed link, or a password reset) before signing in with the provider again; ` +
    `an unverified email never links: without a verified email the new account gets the derived address \`${provider}-<provider user id>@oauth.local\`. ` +
    `A new account emits \`user.created\`. ${SESSION_COOKIE_NOTE} The redirect goes to the \`callbackUrl\` given at the start (default \`/\`). ` +
    `When the provider answers with \`error\` (the user declined) or no \`code\`, the answer is a 302 to \`/signin?error=OAuthCallback\` without a session. ` +
    `502 \`OAUTH_PROVIDER_ERROR\` when the provider's token exchange or user info fails; 503 when the provider is not configured.`,
  query: () =>
    z.object({
      code: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
      state: z.string().check(z.minLength(1), z.maxLength(512)),
      error: z.optional(z.string().check(z.maxLength(256))),
    }),
  responses: () => ({ 302: RedirectBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses(), 400: BadRequest() }),
});

/** Apart from the password accounts: only these routes carry the OAuth client, so no other function bundles it. */
export const oauthSignInContract = defineGroup({
  group: 'oauth-sign-in',
  description: 'Sign-in with an OAuth provider (code hosting, web identity) and the list of configured providers (spec 4.1).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'listSignInProviders',
      method: 'GET',
      path: '/api/auth/providers',
      auth: 'none',
      summary: 'Which OAuth sign-in providers are configured, so a sign-in page shows only their buttons.',
      description:
        'Public and cacheable (`Cache-Control: public, max-age=300`): it reads the configuration only, starts no flow and stores nothing. ' +
        'A provider is listed when its client id and client secret are both configured (its start route then redirects instead of answering 503 `OAUTH_NOT_CONFIGURED`). ' +
        'The local stack adds `localMailUrl`, its mail page, since it sends no mail.',
      responses: () => ({
        200: z.object({
          oauthProviders: z.array(z.enum(['codehost', 'webid'])).check(z.describe('the configured providers; start one at `GET /api/auth/oauth-<provider>`')),
          localMailUrl: z.optional(
            z
              .string()
              .check(
                z.regex(/^\/[^/]/),
                z.describe('the local stack only: the page listing the mails it would have sent (the confirmation link among them); absent everywhere else'),
              ),
          ),
        }),
        ...commonErrorResponses(),
      }),
    },
    oauthStart('startCodehostOAuth', 'codehost', 'code-hosting'),
    oauthStart('startWebidOAuth', 'webid', 'web-identity'),
    oauthCallback('codehostOAuthCallback', 'codehost', 'Code-hosting'),
    oauthCallback('webidOAuthCallback', 'webid', 'Web-identity'),
  ],
});
