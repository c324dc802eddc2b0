import * as z from 'zod/mini';
import { lazySchema } from './route';

/*
 * The account fields that the accounts, OAuth sign-in and wallet sign-in groups share and that
 * data/users.ts reads, apart from the groups: importing a field builds no group's routes.
 */

/** The paid plans of the plan table (spec 2.16). */
export const PlanName = lazySchema(() => z.enum(['label', 'solo', 'collective', 'network']));

/** Legacy tier names that still drive the agent-count limit at provisioning (spec 2.16). */
export const LegacyTier = lazySchema(() => z.enum(['starter', 'pro', 'enterprise']));

export const AccountPlan = lazySchema(() =>
  z
    .enum(['none', ...PlanName().options, ...LegacyTier().options])
    .check(z.describe('the account plan: a paid plan, a legacy tier, or `none` without a subscription (the retired `free` plan reads as `none`)')),
);

export const Email = lazySchema(() => z.email().check(z.maxLength(254), z.describe('compared case-insensitively; stored lower-cased')));

/** Upper bound so a huge password cannot turn argon2 hashing into a denial of service. */
export const PASSWORD_MAX_LENGTH = 256;
export const SIGN_UP_PASSWORD_MIN_LENGTH = 8;
export const RESET_PASSWORD_MIN_LENGTH = 6;

export const NewPassword = lazySchema(() => z.string().check(z.minLength(SIGN_UP_PASSWORD_MIN_LENGTH), z.maxLength(PASSWORD_MAX_LENGTH)));
/** Checking an existing password: no minimum, so an old short password still gets a plain 401. */
export const ExistingPassword = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(PASSWORD_MAX_LENGTH)));

export const DisplayName = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(100)));

export const ReferralCode = lazySchema(() =>
  z.string().check(z.regex(/^[A-Za-z0-9-]{1,20}$/, 'letters, digits and hyphens, at most 20 characters'), z.describe('case-insensitive')),
);

/** An in-app path (`/dashboard`), never an absolute or protocol-relative URL: no open redirects. */
export const CallbackPath = lazySchema(() =>
  z
    .string()
    .check(
      z.maxLength(2048),
      z.regex(/^\/(?![/\\])[^\s]*$/, 'must be a path on this site starting with a single /'),
      z.describe('where to land after sign-in: a path on this site; absolute URLs are refused'),
    ),
);

/** The public profile a sign-in answers with. */
export const PublicUser = lazySchema(() =>
  z.object({
    id: z.string(),
    email: Email(),
    name: z.string(),
    plan: AccountPlan(),
    credits: z.int().check(z.describe('credit balance')),
  }),
);

export const SignedInBody = lazySchema(() => z.object({ user: PublicUser() }));

export const MessageBody = lazySchema(() => z.object({ message: z.string() }));

/** A redirect carries no body: the target is in the `Location` header. */
export const RedirectBody = lazySchema(() => z.null().check(z.describe('no body; the target is in the Location header')));

export const SESSION_COOKIE_NOTE =
  'On success the answer sets the session cookie (HttpOnly, Secure, SameSite=Lax) holding a 7-day JWT, which is also accepted as `Authorization: Bearer`.';
