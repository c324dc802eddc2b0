import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup } from './route';

/** The paid plans of the plan table (spec 2.16). */
export const PlanName = z.enum(['label', 'solo', 'collective', 'network']);

/** Legacy tier names that still drive the agent-count limit at provisioning (spec 2.16). */
export const LegacyTier = z.enum(['starter', 'pro', 'enterprise']);

export const AccountPlan = z
  .enum(['none', ...PlanName.options, ...LegacyTier.options])
  .check(z.describe('the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)'));

export const Email = z.email().check(z.maxLength(254), z.describe('compared case-insensitively; stored lower-cased'));

/** Upper bound so a huge password cannot turn argon2 hashing into a denial of service. */
export const PASSWORD_MAX_LENGTH = 256;
export const SIGN_UP_PASSWORD_MIN_LENGTH = 8;
export const RESET_PASSWORD_MIN_LENGTH = 6;

export const NewPassword = z.string().check(z.minLength(SIGN_UP_PASSWORD_MIN_LENGTH), z.maxLength(PASSWORD_MAX_LENGTH));
/** Checking an existing password: no minimum, so an old short password still gets a plain 401. */
export const ExistingPassword = z.string().check(z.minLength(1), z.maxLength(PASSWORD_MAX_LENGTH));

export const DisplayName = z.string().check(z.minLength(1), z.maxLength(100));

export const ReferralCode = z
  .string()
  .check(z.regex(/^[A-Za-z0-9-]{1,20}$/, 'letters, digits and hyphens, at most 20 characters'), z.describe('case-insensitive'));

/** An in-app path (`/dashboard`), never an absolute or protocol-relative URL: no open redirects. */
export const CallbackPath = z
  .string()
  .check(
    z.maxLength(2048),
    z.regex(/^\/(?![/\\])[^\s]*$/, 'must be a path on this site starting with a single /'),
    z.describe('where to land after sign-in: a path on this site; absolute URLs are refused'),
  );

/** The public profile a sign-in answers with. */
export const PublicUser = z.object({
  id: z.string(),
  email: Email,
  name: z.string(),
  plan: AccountPlan,
  credits: z.int().check(z.describe('credit balance')),
});

export const SignedInBody = z.object({ user: PublicUser });

export const MessageBody = z.object({ message: z.string() });

/** A redirect carries no body: the target is in the `Location` header. */
export const RedirectBody = z.null().check(z.describe('no body; the target is in the Location header'));

/** 400s the handler gives itself (beyond the pipeline's validation errors). */
const BadRequest = z.union([ValidationErrorBody, ErrorBody]);

const BOT_CHECK_NOTE =
  'Bot detection runs first when it is enabled: the client sends the challenge token it got from the bot-check widget in the `x-bot-check-token` header; a missing or refused token answers 403 `BOT_DETECTED` ' +
  '(503 `BOT_CHECK_UNAVAILABLE` when the verification service cannot be reached). The local stack runs with bot detection off.';

const SESSION_COOKIE_NOTE =
  'On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`.';

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
  query: z.object({ callbackUrl: z.optional(CallbackPath) }),
  responses: { 302: RedirectBody, 503: ErrorBody, ...commonErrorResponses },
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
  query: z.object({
    code: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
    state: z.string().check(z.minLength(1), z.maxLength(512)),
    error: z.optional(z.string().check(z.maxLength(256))),
  }),
  responses: { 302: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses, 400: BadRequest },
});

export const accountsContract = defineGroup({
  group: 'accounts',
  description: 'Sign-up, sign-in (credentials, OAuth, wallet), password reset, session cookies and CSRF tokens (spec 4.1).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'register',
      sameOriginOnly: true,
      method: 'POST',
      path: '/api/register',
      auth: 'none',
      rateLimit: 'register',
      summary: 'Create an account with email and password.',
      description:
        '`name` defaults to the email. The password is stored as an argon2id hash. A referral code (case-insensitive) must match an existing account (400 `INVALID_REFERRAL_CODE` otherwise) ' +
        'and credits both the new user and the referrer with REFERRAL_CREDITS (default 100) once, when the new user confirms the address, up to REFERRAL_CAP (default 20) credited referrals per referrer. ' +
        `${BOT_CHECK_NOTE} 409 \`USER_EXISTS\` when the email is taken (compared case-insensitively; of concurrent sign-ups of one email exactly one succeeds). ` +
        'Limited per client address (scope `register`). Emits `user.created`. Does not sign the user in: call the credentials callback next. ' +
        'A confirmation link is emailed to the address (see `POST /api/auth/verify-email`). Until it is opened the account can sign in and use everything that needs no proven address, ' +
        "but it CANNOT yet: hold admin or tester rights (even for an address in the operator's lists), be linked by an OAuth sign-in with the same email, or earn referral credit " +
        '(for itself or its referrer). Settings show `emailVerified`.',
      body: z.strictObject({
        email: Email,
        password: NewPassword,
        name: z.optional(DisplayName),
        referralCode: z.optional(ReferralCode),
      }),
      example: { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace', referralCode: 'GRACE-2024' },
      responses: {
        201: z.object({ id: z.string(), email: Email, name: z.string() }),
        409: ErrorBody,
        ...commonErrorResponses,
        400: BadRequest,
      },
    },
    {
      operation: 'signInWithCredentials',
      sameOriginOnly: true,
      method: 'POST',
      path: '/api/auth/callback/credentials',
      auth: 'none',
      rateLimit: 'signIn',
      summary: 'Sign in with email and password; answers the public profile and sets the session cookie.',
      description:
        `${SESSION_COOKIE_NOTE} A wrong password and an unknown email give the same 401 body (\`{error: "Invalid email or password", code: "INVALID_CREDENTIALS"}\`) ` +
        'after the same hashing work, so the answer never reveals whether an account exists. Accounts without a password (OAuth or wallet only) answer the same 401. ' +
        'Attempts are limited per client address whatever the account (scope `signIn`): 429 with `Retry-After`. Only failed attempts count against an account: ' +
        'per account and client address (scope `signInAddress`, default 5 per 15 minutes) the next attempt from that address answers 429 with `Retry-After` before any password is checked, ' +
        "and a successful sign-in clears that address's count. Per account across all addresses (scope `signInAccount`, default 20 per 15 minutes) the account is never locked: " +
        'an address the owner signed in from successfully in the last 90 days goes on as usual, any other address must send a solved bot-check token in `x-bot-check-token` ' +
        '(403 `BOT_CHECK_REQUIRED` without one, 403 `BOT_DETECTED` for a refused one) when bot detection is on, or gets its answer after a delay (`SIGN_IN_CAPPED_DELAY_MS`) when it is off.',
      body: z.strictObject({ email: Email, password: ExistingPassword }),
      example: { email: 'ada@example.com', password: 'correct horse battery' },
      responses: { 200: SignedInBody, ...commonErrorResponses },
    },
    {
      operation: 'listSignInProviders',
      method: 'GET',
      path: '/api/auth/providers',
      auth: 'none',
      summary: 'Which OAuth sign-in providers are configured, so a sign-in page shows only their buttons.',
      description:
        'Public and cacheable (`Cache-Control: public, max-age=300`): it reads the configuration only, starts no flow and stores nothing. ' +
        'A provider is listed when its client id and client secret are both configured (its start route then redirects instead of answering 503 `OAUTH_NOT_CONFIGURED`).',
      responses: {
        200: z.object({
          oauthProviders: z.array(z.enum(['codehost', 'webid'])).check(z.describe('the configured providers; start one at `GET /api/auth/oauth-<provider>`')),
        }),
        ...commonErrorResponses,
      },
    },
    oauthStart('startCodehostOAuth', 'codehost', 'code-hosting'),
    oauthStart('startWebidOAuth', 'webid', 'web-identity'),
    oauthCallback('codehostOAuthCallback', 'codehost', 'Code-hosting'),
    oauthCallback('webidOAuthCallback', 'webid', 'Web-identity'),
    {
      operation: 'getSiweNonce',
      method: 'GET',
      path: '/api/auth/nonce',
      auth: 'none',
      // Each nonce is a write: unauthenticated callers share the sign-in budget per address.
      rateLimit: 'signIn',
      summary: 'Issue a single-use nonce to put in a Sign-In with Ethereum (EIP-4361) message.',
      description:
        'The nonce is stored server-side with a 10-minute expiry and is consumed by the first wallet sign-in that presents it, whether that sign-in succeeds or not.',
      responses: {
        200: z.object({
          nonce: z.string().check(z.regex(/^[A-Za-z0-9]{8,64}$/), z.describe('alphanumeric, as EIP-4361 requires')),
          expiresAt: IsoDate,
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'signInWithWallet',
      sameOriginOnly: true,
      method: 'POST',
      path: '/api/auth/callback/wallet',
      auth: 'none',
      rateLimit: 'signIn',
      handlerValidates: true,
      summary: 'Sign in with a signed SIWE message; sets the session cookie and redirects to the callback URL.',
      description:
        'The message must be on chain id 0x2105 (8453), its domain must match the configured application URL, its nonce must be one issued by `GET /api/auth/nonce` ' +
        'that is unexpired and unused (consumed atomically), and the signature must verify (EOA, deployed smart wallet via ERC-1271, or undeployed smart wallet via ERC-6492). ' +
        'Missing or malformed `message`/`signature`, a message that does not parse, domain/URI/chain mismatch, an `Issued At` in the future, an expired (`Expiration Time`) or not yet valid (`Not Before`) message answer 401 `SIWE_INVALID`; ' +
        'an unknown, expired or used nonce 401 `NONCE_INVALID`; a signature that does not verify 401 `SIGNATURE_INVALID` (the spec names 401 for missing fields, so the handler validates the body itself). ' +
        'Smart-wallet signatures are checked through the chain RPC with a bounded timeout: when it is not configured, down or too slow the answer is 503 `CHAIN_UNAVAILABLE` (ask for a new nonce and retry). ' +
        'A wallet without an account gets one, with the wallet-derived email `<lower-case address>@wallet.local` (and emits `user.created`); if an account exists for the wallet-derived email the wallet is linked to it. ' +
        `${SESSION_COOKIE_NOTE} The answer is a 302 to \`callbackUrl\` (default \`/\`), or 200 \`{user}\` when the request sends \`Accept: application/json\`.`,
      query: z.object({ callbackUrl: z.optional(CallbackPath) }),
      body: z.strictObject({
        message: z.string().check(z.minLength(1), z.maxLength(8192), z.describe('the full EIP-4361 message text')),
        signature: z
          .string()
          .check(z.maxLength(32768), z.regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex'), z.describe('0x-prefixed; ERC-6492 wrapped signatures are long')),
      }),
      example: {
        message:
          'app.example.com wants you to sign in with your Ethereum account:\n0x5B38Da6a701c568545dCfcB03FcB875f56beddC4\n\nSign in to the agent platform.\n\nURI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: k8Jd2mQp7XrT4vLz\nIssued At: 2025-01-15T10:00:00.000Z',
        signature: '0x454349e422f05297191ead13e21d3db520e5abef52055e4964b82fb213f593a1043a718774c572bd8a25adbeb1bfcd5c0256ae11cecf9f9c3f925d0e52beaf891b',
      },
      responses: { 200: SignedInBody, 302: RedirectBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'forgotPassword',
      method: 'POST',
      path: '/api/auth/forgot-password',
      auth: 'none',
      rateLimit: 'forgotPassword',
      summary: 'Email a password-reset link; the answer is identical whether or not the account exists.',
      description:
        `${BOT_CHECK_NOTE} The emailed link is \`<APP_URL>/reset-password?token=<token>\`; the token is 32 random bytes (base64url), stored only as its SHA-256, single use, valid for 30 minutes; ` +
        'a new request makes any earlier link void. The answer and its timing are the same whether or not the account exists, so failures of the email service are logged and not answered ' +
        '(passing them on would tell which emails have accounts). Limited per client address (scope `forgotPassword`).',
      body: z.strictObject({ email: Email }),
      example: { email: 'ada@example.com' },
      responses: { 200: MessageBody, ...commonErrorResponses, 400: BadRequest },
    },
    {
      operation: 'resetPassword',
      method: 'POST',
      path: '/api/auth/reset-password',
      auth: 'none',
      rateLimit: 'resetPassword',
      summary: 'Set a new password with the token from the emailed link.',
      description:
        '400 `INVALID_TOKEN` for an unknown, used, superseded or expired token; 404 when the account behind the token no longer exists. ' +
        'Consumes the token (of concurrent uses exactly one succeeds), signs out every session of the account, and keeps its email and profile. Limited per client address (scope `resetPassword`).',
      body: z.strictObject({
        token: z.string().check(z.minLength(1), z.maxLength(512), z.describe('from the emailed link')),
        password: z.string().check(z.minLength(RESET_PASSWORD_MIN_LENGTH), z.maxLength(PASSWORD_MAX_LENGTH)),
      }),
      example: { token: 'q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E', password: 'new-secret-42' },
      responses: { 200: MessageBody, 404: ErrorBody, ...commonErrorResponses, 400: BadRequest },
    },
    {
      operation: 'verifyEmail',
      method: 'POST',
      path: '/api/auth/verify-email',
      auth: 'none',
      rateLimit: 'verifyEmail',
      summary: 'Confirm an email address with the token from the emailed link.',
      description:
        'Sign-up emails `<APP_URL>/verify-email?token=<token>` to the new address; an email change emails the same kind of link to the NEW address, which takes effect only here. ' +
        'The token is 32 random bytes (base64url), stored only as its SHA-256, single use, valid for 24 hours; a newer link of the account makes earlier ones void. ' +
        '400 `INVALID_TOKEN` for an unknown, used, superseded or expired token; 409 `EMAIL_IN_USE` when the new address of a change was taken meanwhile. ' +
        'A confirmed sign-up address turns on what needs a proven address (admin and tester rights, OAuth account linking, referral credit, paid to both accounts now). ' +
        'A confirmed change moves the account to the new address and signs out every session (tokens carry the email): sign in again with the new address.',
      body: z.strictObject({ token: z.string().check(z.minLength(1), z.maxLength(512), z.describe('from the emailed link')) }),
      example: { token: 'mF3kQ9vX2pLr8TnWc5yBd1FgE4sJuO6aZ7hY0iKxNcA' },
      responses: {
        200: z.object({ message: z.string(), email: Email, emailVerified: z.literal(true) }),
        409: ErrorBody,
        ...commonErrorResponses,
        400: BadRequest,
      },
    },
    {
      operation: 'resendVerificationEmail',
      method: 'POST',
      path: '/api/auth/verify-email/resend',
      auth: 'session',
      rateLimit: 'verifyEmailResend',
      summary: 'Email the confirmation link again: to the pending new address of an email change, else to the unconfirmed account address.',
      description:
        'Makes every earlier link of the account void. 400 `ALREADY_VERIFIED` when the address is confirmed and no change is pending. Limited per account (scope `verifyEmailResend`).',
      responses: { 200: MessageBody, ...commonErrorResponses },
    },
    {
      operation: 'signOut',
      method: 'POST',
      path: '/api/auth/signout',
      auth: 'optional',
      summary: 'Clear the session cookie; optionally sign out every session of the account.',
      description:
        'Answers `{success: true}` with or without a session (a present but invalid credential is still 401) and clears the session and CSRF cookies. ' +
        'Session tokens are stateless JWTs, so a copy of this one kept elsewhere (a Bearer client) stays valid until it expires, unless `everywhere=true`: ' +
        'then every session of the account issued until now is revoked, the instance gateway token is rotated, API keys are revoked when the body says `revokeApiKeys: true`, and the account gets an email listing what was revoked. An absent body is read as `{}`. A cookie-authenticated call needs the CSRF token like any other write.',
      query: z.object({
        everywhere: z.optional(z.enum(['true', 'false'])).check(z.describe('`true` revokes every session of the account, this one included')),
      }),
      body: z.strictObject({
        revokeApiKeys: z.optional(z.boolean()).check(z.describe('with `everywhere=true`, also revoke every API key of the account')),
      }),
      example: { revokeApiKeys: true },
      responses: { 200: SuccessTrue, ...commonErrorResponses },
    },
    {
      operation: 'getCsrfToken',
      method: 'GET',
      path: '/api/auth/csrf',
      auth: 'session',
      summary: 'Issue the CSRF token for cookie-authenticated writes.',
      description:
        'Sets the CSRF cookie and answers the same value; cookie-authenticated POST/PUT/PATCH/DELETE must echo it in the `x-csrf-token` header (403 when missing or wrong). ' +
        'Bearer and API-key requests need no CSRF token; an API-key caller has no session and gets 400 `NO_SESSION`.',
      responses: { 200: z.object({ csrfToken: z.string().check(z.minLength(1)) }), ...commonErrorResponses },
    },
  ],
});
