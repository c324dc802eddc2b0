import * as z from 'zod/mini';
import {
  DisplayName,
  Email,
  ExistingPassword,
  MessageBody,
  NewPassword,
  PASSWORD_MAX_LENGTH,
  ReferralCode,
  RESET_PASSWORD_MIN_LENGTH,
  SESSION_COOKIE_NOTE,
  SignedInBody,
} from './account-fields';
import { commonErrorResponses, ErrorBody, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

export * from './account-fields';

/** 400s the handler gives itself (beyond the pipeline's validation errors); not exported, so it stays inline in the document. */
const BadRequest = lazySchema(() => z.union([ValidationErrorBody(), ErrorBody()]));

const BOT_CHECK_NOTE =
  'Bot detection runs first when it is enabled: the client sends the challenge token it got from the bot-check widget in the `x-bot-check-token` header; a missing or refused token answers 403 `BOT_DETECTED` ' +
  '(503 `BOT_CHECK_UNAVAILABLE` when the verification service cannot be reached). The local stack runs with bot detection off.';

export const accountsContract = defineGroup({
  group: 'accounts',
  description: 'Sign-up and sign-in with email and password, email confirmation, password reset, sign-out and CSRF tokens (spec 4.1).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'register',
      policy: { sameOrigin: true },
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
      body: () =>
        z.strictObject({
          email: Email(),
          password: NewPassword(),
          name: z.optional(DisplayName()),
          referralCode: z.optional(ReferralCode()),
        }),
      example: { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace', referralCode: 'GRACE-2024' },
      responses: () => ({
        201: z.object({ id: z.string(), email: Email(), name: z.string() }),
        409: ErrorBody(),
        ...commonErrorResponses(),
        400: BadRequest(),
      }),
    },
    {
      operation: 'signInWithCredentials',
      policy: { sameOrigin: true },
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
      body: () => z.strictObject({ email: Email(), password: ExistingPassword() }),
      example: { email: 'ada@example.com', password: 'correct horse battery' },
      responses: () => ({ 200: SignedInBody(), ...commonErrorResponses() }),
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
      body: () => z.strictObject({ email: Email() }),
      example: { email: 'ada@example.com' },
      responses: () => ({ 200: MessageBody(), ...commonErrorResponses(), 400: BadRequest() }),
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
      body: () =>
        z.strictObject({
          token: z.string().check(z.minLength(1), z.maxLength(512), z.describe('from the emailed link')),
          password: z.string().check(z.minLength(RESET_PASSWORD_MIN_LENGTH), z.maxLength(PASSWORD_MAX_LENGTH)),
        }),
      example: { token: 'q3Xv9cJf0bN2kLr7TzWy5eA1uH8sDg4MpQo6iVxKc0E', password: 'new-secret-42' },
      responses: () => ({ 200: MessageBody(), 404: ErrorBody(), ...commonErrorResponses(), 400: BadRequest() }),
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
      body: () => z.strictObject({ token: z.string().check(z.minLength(1), z.maxLength(512), z.describe('from the emailed link')) }),
      example: { token: 'mF3kQ9vX2pLr8TnWc5yBd1FgE4sJuO6aZ7hY0iKxNcA' },
      responses: () => ({
        200: z.object({ message: z.string(), email: Email(), emailVerified: z.literal(true) }),
        409: ErrorBody(),
        ...commonErrorResponses(),
        400: BadRequest(),
      }),
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
      responses: () => ({ 200: MessageBody(), ...commonErrorResponses() }),
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
      query: () =>
        z.object({
          everywhere: z.optional(z.enum(['true', 'false'])).check(z.describe('`true` revokes every session of the account, this one included')),
        }),
      body: () =>
        z.strictObject({
          revokeApiKeys: z.optional(z.boolean()).check(z.describe('with `everywhere=true`, also revoke every API key of the account')),
        }),
      example: { revokeApiKeys: true },
      responses: () => ({ 200: SuccessTrue(), ...commonErrorResponses() }),
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
      responses: () => ({ 200: z.object({ csrfToken: z.string().check(z.minLength(1)) }), ...commonErrorResponses() }),
    },
  ],
});
