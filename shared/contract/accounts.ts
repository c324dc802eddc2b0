import * as z from 'zod';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate, SuccessTrue, ValidationErrorBody } from './route';

/** The paid plans of the plan table (spec 2.16). */
export const PlanName = z.enum(['label', 'solo', 'collective', 'network']);

/** Legacy tier names that still drive the agent-count limit at provisioning (spec 2.16). */
export const LegacyTier = z.enum(['starter', 'pro', 'enterprise']);

export const AccountPlan = z
  .enum(['none', ...PlanName.options, ...LegacyTier.options])
  .describe('the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)');

export const Email = z.email().max(254).describe('compared case-insensitively; stored lower-cased');

/** Upper bound so a huge password cannot turn argon2 hashing into a denial of service. */
export const PASSWORD_MAX_LENGTH = 256;
export const SIGN_UP_PASSWORD_MIN_LENGTH = 8;
export const RESET_PASSWORD_MIN_LENGTH = 6;

export const NewPassword = z.string().min(SIGN_UP_PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH);
/** Checking an existing password: no minimum, so an old short password still gets a plain 401. */
export const ExistingPassword = z.string().min(1).max(PASSWORD_MAX_LENGTH);

export const DisplayName = z.string().min(1).max(100);

export const ReferralCode = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,20}$/, 'letters, digits and hyphens, at most 20 characters')
  .describe('case-insensitive');

/** An in-app path (`/dashboard`), never an absolute or protocol-relative URL: no open redirects. */
export const CallbackPath = z
  .string()
  .max(2048)
  .regex(/^\/(?![/\\])[^\s]*$/, 'must be a path on this site starting with a single /')
  .describe('where to land after sign-in: a path on this site; absolute URLs are refused');

/** The public profile a sign-in answers with. */
export const PublicUser = z.object({
  id: z.string(),
  email: Email,
  name: z.string(),
  plan: AccountPlan,
  credits: z.number().int().describe('credit balance'),
});

export const SignedInBody = z.object({ user: PublicUser });

export const MessageBody = z.object({ message: z.string() });

/** A redirect carries no body: the target is in the `Location` header. */
export const RedirectBody = z.null().describe('no body; the target is in the Location header');

/** 400s the handler gives itself (beyond the pipeline's validation errors). */
const BadRequest = z.union([ValidationErrorBody, ErrorBody]);

const SESSION_COOKIE_NOTE =
  'On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`.';

const oauthStart = (provider: 'codehost' | 'webid', label: string) => ({
  operation: provider === 'codehost' ? 'startCodehostOAuth' : 'startWebidOAuth',
  method: 'GET' as const,
  path: `/api/auth/oauth-${provider}`,
  auth: 'none' as const,
  summary: `Start ${label} OAuth sign-in: 302 to the provider's authorisation page.`,
  description:
    `Sets a short-lived, HttpOnly state cookie (random \`state\` plus PKCE verifier and the \`callbackUrl\`) and redirects to the provider. ` +
    `503 \`OAUTH_NOT_CONFIGURED\` when the provider's client id or client secret is not configured.`,
  query: z.object({ callbackUrl: CallbackPath.optional() }),
  responses: { 302: RedirectBody, 503: ErrorBody, ...commonErrorResponses },
});

const oauthCallback = (provider: 'codehost' | 'webid', label: string) => ({
  operation: provider === 'codehost' ? 'codehostOAuthCallback' : 'webidOAuthCallback',
  method: 'GET' as const,
  path: `/api/auth/callback/${provider}`,
  auth: 'none' as const,
  summary: `${label} OAuth callback: exchanges the code, signs the user in and 302s back to the app.`,
  description:
    `\`state\` must match the state cookie set by the start route (400 \`OAUTH_STATE_INVALID\` otherwise, the cookie is single use). ` +
    `The provider's verified email links to an existing account with the same email on first sign-in instead of creating a duplicate (spec 4.1 rule 1); ` +
    `a new account is created otherwise. ${SESSION_COOKIE_NOTE} The redirect goes to the \`callbackUrl\` given at the start (default \`/\`). ` +
    `When the provider answers with \`error\` (the user declined) or no \`code\`, the answer is a 302 to \`/signin?error=OAuthCallback\` without a session. ` +
    `502 when the provider's token exchange fails; 503 when the provider is not configured.`,
  query: z.object({
    code: z.string().min(1).max(2048).optional(),
    state: z.string().min(1).max(512),
    error: z.string().max(256).optional(),
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
      method: 'POST',
      path: '/api/register',
      auth: 'none',
      rateLimit: 'register',
      summary: 'Create an account with email and password.',
      description:
        '`name` defaults to the email. A referral code must match an existing account (400 `INVALID_REFERRAL_CODE` otherwise) and credits both the new user and the referrer. ' +
        'Bot detection runs first (403 `BOT_DETECTED`). 409 `USER_EXISTS` when the email is taken (compared case-insensitively). Emits `user.created`. ' +
        'Does not sign the user in: call the credentials callback next.',
      body: z.strictObject({
        email: Email,
        password: NewPassword,
        name: DisplayName.optional(),
        referralCode: ReferralCode.optional(),
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
      method: 'POST',
      path: '/api/auth/callback/credentials',
      auth: 'none',
      rateLimit: 'signIn',
      summary: 'Sign in with email and password; answers the public profile and sets the session cookie.',
      description:
        `${SESSION_COOKIE_NOTE} A wrong password and an unknown email give the same 401 body (\`{error: "Invalid email or password", code: "INVALID_CREDENTIALS"}\`) ` +
        'after the same hashing work, so the answer never reveals whether an account exists. Accounts without a password (OAuth or wallet only) answer the same 401.',
      body: z.strictObject({ email: Email, password: ExistingPassword }),
      example: { email: 'ada@example.com', password: 'correct horse battery' },
      responses: { 200: SignedInBody, ...commonErrorResponses },
    },
    oauthStart('codehost', 'code-hosting'),
    oauthStart('webid', 'web-identity'),
    oauthCallback('codehost', 'Code-hosting'),
    oauthCallback('webid', 'Web-identity'),
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
          nonce: z.string().regex(/^[A-Za-z0-9]{8,64}$/).describe('alphanumeric, as EIP-4361 requires'),
          expiresAt: IsoDate,
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'signInWithWallet',
      method: 'POST',
      path: '/api/auth/callback/wallet',
      auth: 'none',
      rateLimit: 'signIn',
      handlerValidates: true,
      summary: 'Sign in with a signed SIWE message; sets the session cookie and redirects to the callback URL.',
      description:
        'The message must be on chain id 0x2105 (8453), its domain must match the configured application URL, its nonce must be one issued by `GET /api/auth/nonce` ' +
        'that is unexpired and unused (consumed atomically), and the signature must verify (EOA, deployed smart wallet via ERC-1271, or undeployed smart wallet via ERC-6492). ' +
        'Missing or malformed `message`/`signature`, domain mismatch, bad or reused nonce and failed verification all answer 401 (the spec names 401 for missing fields, so the handler validates the body itself). ' +
        'A wallet without an account gets one; if an account exists for the wallet-derived email the wallet is linked to it. ' +
        `${SESSION_COOKIE_NOTE} The answer is a 302 to \`callbackUrl\` (default \`/\`), or 200 \`{user}\` when the request sends \`Accept: application/json\`.`,
      query: z.object({ callbackUrl: CallbackPath.optional() }),
      body: z.strictObject({
        message: z.string().min(1).max(8192).describe('the full EIP-4361 message text'),
        signature: z
          .string()
          .max(32768)
          .regex(/^0x[0-9a-fA-F]+$/, 'must be 0x-prefixed hex')
          .describe('0x-prefixed; ERC-6492 wrapped signatures are long'),
      }),
      example: {
        message:
          'app.example.com wants you to sign in with your Ethereum account:\n0x5B38Da6a701c568545dCfcB03FcB875f56beddC4\n\nSign in to the agent platform.\n\nURI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: k8Jd2mQp7XrT4vLz\nIssued At: 2025-01-15T10:00:00.000Z',
        signature:
          '0x454349e422f05297191ead13e21d3db520e5abef52055e4964b82fb213f593a1043a718774c572bd8a25adbeb1bfcd5c0256ae11cecf9f9c3f925d0e52beaf891b',
      },
      responses: { 200: SignedInBody, 302: RedirectBody, ...commonErrorResponses },
    },
    {
      operation: 'forgotPassword',
      method: 'POST',
      path: '/api/auth/forgot-password',
      auth: 'none',
      rateLimit: 'forgotPassword',
      summary: 'Email a password-reset link; the answer is identical whether or not the account exists.',
      description:
        'Bot detection runs first (403 `BOT_DETECTED`). The emailed token is 32 random bytes, stored only as a hash, single use, valid for 1 hour; a new request replaces any earlier token. ' +
        'A 400 from the email service (for example an address it refuses) is passed on as 400 `EMAIL_REJECTED`.',
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
        '400 `INVALID_TOKEN` for an unknown, used or expired token; 404 when the account behind the token no longer exists. ' +
        'Consumes the token; the account keeps its email and profile.',
      body: z.strictObject({
        token: z.string().min(1).max(512).describe('from the emailed link'),
        password: z.string().min(RESET_PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH),
      }),
      example: { token: 'q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E', password: 'new-secret-42' },
      responses: { 200: MessageBody, 404: ErrorBody, ...commonErrorResponses, 400: BadRequest },
    },
    {
      operation: 'signOut',
      method: 'POST',
      path: '/api/auth/signout',
      auth: 'optional',
      summary: 'Clear the session cookie.',
      description:
        'Answers `{success: true}` with or without a session (a present but invalid credential is still 401). A cookie-authenticated call needs the CSRF token like any other write.',
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
        'Bearer and API-key requests need no CSRF token.',
      responses: { 200: z.object({ csrfToken: z.string().min(1) }), ...commonErrorResponses },
    },
  ],
});
