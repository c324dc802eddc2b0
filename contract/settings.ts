import * as z from 'zod/mini';
import { AccountPlan, DisplayName, Email, ExistingPassword, NewPassword } from './account-fields';
import { commonErrorResponses, ErrorBody, SuccessTrue } from './common';
import { defineGroup, lazySchema } from './route';

/** A PATCH changes only the keys it names; the rest keep their value. */
export const NotificationsPatch = lazySchema(() =>
  z
    .strictObject({
      email: z.optional(z.boolean()).check(z.describe('account and security email (sign-in alerts, password changes)')),
      agentStatus: z.optional(z.boolean()).check(z.describe('an agent changes status: running, stopped, error')),
      billing: z.optional(z.boolean()).check(z.describe('receipts, failed payments, renewals, low credit balance')),
      productUpdates: z.optional(z.boolean()).check(z.describe('product news and announcements')),
    })
    .check(z.describe('notification preferences to change; keys left out keep their current value')),
);

export const NOTIFICATION_DEFAULTS = { email: true, agentStatus: true, billing: true, productUpdates: false } as const;

export const Notifications = lazySchema(() =>
  z
    .object({ email: z.boolean(), agentStatus: z.boolean(), billing: z.boolean(), productUpdates: z.boolean() })
    .check(z.describe('notification preferences; defaults: email, agentStatus and billing on, productUpdates off')),
);

/** Spec 4.1 fields, plus the notification preferences so a PATCH can be read back. */
export const SettingsProfile = lazySchema(() =>
  z.object({
    id: z.string(),
    email: Email(),
    name: z.string(),
    plan: AccountPlan(),
    credits: z.int(),
    twoFactorEnabled: z.boolean(),
    notifications: Notifications(),
    emailVerified: z
      .boolean()
      .check(
        z.describe(
          'the address was confirmed through an emailed link (or an OAuth provider); admin and tester rights, OAuth linking and referral credit need it',
        ),
      ),
    pendingEmail: z.nullable(Email()).check(z.describe('a new address waiting for its confirmation link; `email` changes when the link is opened')),
    referralCode: z.string().check(z.describe("the account's own referral code, to share")),
    referralsCredited: z.int().check(z.gte(0), z.describe('referrals of this account that were credited (at most REFERRAL_CAP)')),
  }),
);

export const StandingSetupRemoved = lazySchema(() =>
  z.object({
    success: z.literal(true),
    removed: z
      .object({
        webhookEndpoints: z.int().check(z.gte(0)),
        schedules: z.int().check(z.gte(0)),
        channelConnections: z.int().check(z.gte(0)),
        agentPrompts: z.int().check(z.gte(0)).check(z.describe('agents whose custom system prompt was cleared')),
      })
      .check(z.describe('how many of each kind were removed by this call')),
  }),
);

export const settingsContract = defineGroup({
  group: 'settings',
  description: "The caller's profile, notification preferences, password, account recovery and account deletion (spec 4.1).",
  dynamoOnly: false,
  routes: [
    {
      operation: 'getSettings',
      method: 'GET',
      path: '/api/settings',
      auth: 'session',
      summary: "The caller's profile.",
      responses: () => ({ 200: SettingsProfile(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'updateSettings',
      method: 'POST',
      path: '/api/settings',
      auth: 'session',
      summary: 'Change the display name and/or email; answers the updated profile.',
      description:
        'Changing the email needs `currentPassword` (401 `CURRENT_PASSWORD_REQUIRED` when missing, 401 `INVALID_PASSWORD` when wrong; an account without a password, OAuth or wallet only, ' +
        'needs a session signed in within the last 10 minutes instead, else 401 `REAUTH_REQUIRED`). The new email must be unique (case-insensitive): 409 `EMAIL_IN_USE` otherwise; ' +
        'the uniqueness record moves with the profile change in one transaction, so of two accounts racing for one address exactly one gets it. ' +
        "Addresses in the operator's admin or tester list are refused with 403 `EMAIL_RESERVED`. The new address is proven before it takes effect: the answer shows it as `pendingEmail` " +
        'and a confirmation link goes to it; opening the link (`POST /api/auth/verify-email`) moves the account and signs out every session (tokens carry the email). ' +
        'An empty body changes nothing and answers the current profile. Emits `user.updated` when something changed.',
      body: () =>
        z.strictObject({
          name: z.optional(DisplayName()),
          email: z.optional(Email()),
          currentPassword: z.optional(ExistingPassword()).check(z.describe('required when `email` changes')),
        }),
      example: { name: 'Ada King', email: 'ada.king@example.com', currentPassword: 'correct horse battery' },
      responses: () => ({ 200: SettingsProfile(), 404: ErrorBody(), 409: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'patchSettings',
      method: 'PATCH',
      path: '/api/settings',
      auth: 'session',
      summary: 'Change the display name and/or notification preferences; answers the updated profile.',
      description: '`notifications` is merged key by key into the stored preferences. Emits `user.updated` when something changed.',
      body: () => z.strictObject({ name: z.optional(DisplayName()), notifications: z.optional(NotificationsPatch()) }),
      example: { name: 'Ada', notifications: { agentStatus: false, productUpdates: true } },
      responses: () => ({ 200: SettingsProfile(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'deleteAccount',
      method: 'DELETE',
      path: '/api/settings',
      auth: 'session',
      summary: "Delete the caller's account and everything it owns.",
      description:
        '`password` is required unless the session is fresh (its token was issued by a sign-in within the last 10 minutes, per the JWT `iat`); accounts without a password (OAuth or wallet only) must use a fresh session. ' +
        'Missing password on a stale session → 401 `REAUTH_REQUIRED`; wrong password → 401 `INVALID_PASSWORD`. API-key callers are refused (403): only a session may delete the account. ' +
        "Revokes every session, frees the email, referral code and sign-in identities (their global look-ups are deleted), deletes every item of the account's partition " +
        '(profile, credits ledger, agents, keys, memory, wallets, skills, subscription record...), clears the session cookie and emits `user.deleted`. ' +
        'The one item kept is the session-revocation record, with a TTL past the longest token lifetime, so no unexpired token of the account works again. ' +
        'An absent body is read as `{}`. ' +
        'An account with an instance or a card subscription answers 202 `{success: true, status: "deleting"}`: sessions and API keys are revoked at once, and the deletion worker ' +
        'stops the instance (ECS task or local process), cancels the subscription at the card processor (recorded past the deletion), then deletes the data as above; ' +
        'a failure part-way leaves the account `deleting` and the worker retries until it is done. Either way the user gets a final email. 502 when the deletion cannot be queued (nothing is revoked).',
      body: () => z.strictObject({ password: z.optional(ExistingPassword()) }),
      example: { password: 'correct horse battery' },
      responses: () => ({
        200: SuccessTrue(),
        202: z.object({ success: z.literal(true), status: z.literal('deleting') }),
        404: ErrorBody(),
        502: ErrorBody(),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'removeStandingSetup',
      method: 'POST',
      path: '/api/settings/recovery/remove-standing-setup',
      auth: 'session',
      rateLimit: 'standingSetupRemoval',
      policy: { idempotent: true },
      summary: 'Remove, in one step, everything that acts for the account without a sign-in.',
      description:
        "For an owner taking the account back (the password-reset notice links here through the console's Settings page): deletes every account webhook endpoint, " +
        "every agent schedule and every messaging-app channel connection, and clears each agent's custom `systemPrompt` (the rest of its configuration stays; " +
        'a running instance reloads it). Answers how many of each kind were removed. Only a signed-in session may call it: an API key answers 403 `SESSION_REQUIRED`, ' +
        'since a leaked key is what it defends against. Repeating it removes nothing more and answers zeros; with an `Idempotency-Key` the first answer is replayed. ' +
        'Limited per account (scope `standingSetupRemoval`). The body is optional (`{}`).',
      body: () => z.strictObject({}),
      example: {},
      responses: () => ({ 200: StandingSetupRemoved(), ...commonErrorResponses() }),
    },
    {
      operation: 'changePassword',
      method: 'POST',
      path: '/api/settings/password',
      auth: 'session',
      summary: "Change the caller's password.",
      description:
        "Wrong `currentPassword` → 401 `INVALID_PASSWORD` (the session stays valid). On success every other session of the account is signed out (the caller's stays valid) " +
        'and any emailed reset link stops working. The instance gateway token is rotated (a running instance swaps it in place), API keys are revoked when `revokeApiKeys` is true, ' +
        'and the account gets an email listing what was revoked.',
      body: () =>
        z.strictObject({
          currentPassword: ExistingPassword(),
          newPassword: NewPassword(),
          revokeApiKeys: z.optional(z.boolean()).check(z.describe('`true` also revokes every API key of the account')),
        }),
      example: { currentPassword: 'correct horse battery', newPassword: 'staple-battery-horse-9', revokeApiKeys: true },
      responses: () => ({ 200: SuccessTrue(), 404: ErrorBody(), ...commonErrorResponses() }),
    },
  ],
});
