import * as z from 'zod';
import { AccountPlan, PlanName, RedirectBody } from './accounts';
import { GatewayPluginIdSchema } from './gateway';
import { AiProvider } from './provision';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate, ValidationErrorBody } from './route';

export const SubscriptionStatus = z
  .enum(['none', 'active', 'trialing', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'])
  .describe('state of the card subscription as the processor last reported it; `none` when the account never subscribed');

/** A plan named in a request: a paid plan, or the retired `free` plan that is answered 402 (spec 7). */
export const RequestedPlan = z
  .enum([...PlanName.options, 'free'])
  .describe('`label`, `solo`, `collective` or `network`; the retired `free` plan is answered 402 `PLAN_REQUIRED`');

/** Providers whose keys a user may bring: the aggregator and the four model vendors of spec 4.5. */
export const ByokProvider = AiProvider.describe('AI provider id');

export const ByokState = z.object({
  enabled: z.boolean().describe('true when at least one provider key is stored'),
  providers: z
    .array(
      z.object({
        provider: ByokProvider,
        keyPreview: z.string().describe('the last four characters of the key, e.g. `…x9Qa`; the key itself is never returned'),
        updatedAt: IsoDate,
      }),
    )
    .describe('providers with a stored key'),
});

export const PlanLimits = z
  .object({
    agents: z.number().int().nonnegative(),
    skills: z.number().int().nonnegative(),
    a2aPerDay: z.number().int().nonnegative().describe('agent-to-agent messages per day'),
    memory: z
      .string()
      .regex(/^\d+ GB$/)
      .describe('agent memory as the plan table lists it, e.g. `8 GB`'),
    models: z.array(z.string()).describe('model ids (`<vendor>/<model>`) the plan may use'),
  })
  .describe('limits of the plan table (spec 2.16); zeros and no models without a plan; admins get `network` limits');

export const CREDITS_LEDGER_DEFAULT_LIMIT = 20;
export const CREDITS_LEDGER_MAX_LIMIT = 100;
export const STORAGE_UPGRADE_MAX_GB = 64;

const PriceId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'a price id');

export const CreditPack = z.object({ price: PriceId.describe("the processor's price id"), credits: z.number().int().positive() });

const CheckoutAnswer = z.object({
  url: z.url({ protocol: /^https?$/ }).describe("the card processor's hosted checkout page"),
  sessionId: z.string().describe('checkout session id at the processor'),
});

const UsageTotals = z.object({
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  totalTokens: z.number().int(),
  costUsd: z.number().nonnegative(),
  credits: z.number().int().describe('credits charged (0 for allowance, BYOK and admin calls)'),
  calls: z.number().int(),
});

export const Usage = z.object({
  periodStart: IsoDate.describe('start of the billing period (the calendar month, UTC, without a subscription period)'),
  periodEnd: IsoDate,
  credits: z.object({
    balance: z.number().int(),
    spent: z.number().int().nonnegative().describe('credits spent on usage this period (sum of the ledger `usage` entries)'),
    added: z.number().int().nonnegative().describe('credits bought, granted or refunded this period'),
    usageEntries: z.number().int().nonnegative().describe('number of `usage` ledger entries this period'),
  }),
  limits: PlanLimits,
  tokens: z.object({ prompt: z.number().int(), completion: z.number().int(), total: z.number().int() }).describe('model tokens of the period'),
  costUsd: z.number().nonnegative().describe('model cost of the period at catalogue prices, USD'),
  allowance: z
    .object({ includedCredits: z.number().int(), usedCredits: z.number().int() })
    .describe("the plan's included model spend of the period, in credits, and how much of it is used; past it calls are debited from the balance"),
  a2aMessages: z.number().int().nonnegative().describe('agent-to-agent messages of the period'),
  models: z.array(UsageTotals.extend({ model: z.string() })).describe('per model'),
  agents: z
    .array(
      UsageTotals.extend({ agentId: z.string().nullable().describe('null: calls made outside any agent (POST /api/ai/chat)'), a2aMessages: z.number().int() }),
    )
    .describe('per agent'),
  days: z
    .array(UsageTotals.extend({ day: z.string().describe('`yyyy-mm-dd`, UTC'), model: z.string() }))
    .describe('per day and model, oldest first (days without calls are absent)'),
});

const BillingAction = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('create-checkout'), plan: RequestedPlan }),
  z.strictObject({
    action: z.literal('enable-byok'),
    provider: ByokProvider,
    apiKey: z.string().min(8).max(512).regex(/^\S+$/, 'no whitespace').describe('stored envelope-encrypted; never returned or logged'),
  }),
  z.strictObject({ action: z.literal('disable-byok'), provider: ByokProvider }),
  z.strictObject({ action: z.literal('get-usage') }),
  z.strictObject({ action: z.literal('buy-credits'), price: PriceId.describe('price id of one of the credit packs `GET /api/billing` lists') }),
  z.strictObject({ action: z.literal('change-plan'), plan: RequestedPlan }),
  z.strictObject({ action: z.literal('billing-portal') }),
]);

const PlanHoldings = z.object({ agents: z.number().int(), skills: z.number().int() });
const PlanChangeAnswer = z.object({
  success: z.literal(true),
  plan: z.string().describe('the plan asked for; the account moves to it when the card webhook confirms'),
  previousPlan: z.string().nullable(),
  subscriptionId: z.string(),
  status: z.literal('pending'),
});

export const LedgerEntry = z.object({
  id: z.string(),
  delta: z.number().int().describe('credits added (positive) or spent (negative)'),
  reason: z.enum(['purchase', 'referral', 'usage', 'refund', 'adjustment']),
  note: z.string().optional(),
  createdAt: IsoDate,
});

const Gone = z.looseObject({ error: z.string(), code: z.literal('GONE'), use: z.string().describe('the replacement route') });

const BadRequest = z.union([ValidationErrorBody, ErrorBody]);

const CARD_FAILURES = '502 `CARD_PROCESSOR_ERROR` when the processor fails; 503 `CARD_NOT_CONFIGURED` when card payments (or this price) are not configured.';

export const billingContract = defineGroup({
  group: 'billing',
  description: 'Plans, card subscriptions, bring-your-own-key, credits and the card webhook (spec 2.16, 4.14, 7).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'getBilling',
      method: 'GET',
      path: '/api/billing',
      auth: 'session',
      summary: "The caller's plan, subscription, credits, storage, BYOK state, plan limits and the credit packs on sale.",
      description:
        '`plan` is the plan of the latest subscription and stays named after it ends; `active` (status `active` or `trialing`) says whether it is in force. ' +
        'Only verified card webhooks change the plan and status.',
      responses: {
        200: z.object({
          plan: AccountPlan,
          status: SubscriptionStatus,
          active: z.boolean().describe('true while the subscription is `active` or `trialing` (always true for admins)'),
          currentPeriodEnd: IsoDate.nullable(),
          cancelAtPeriodEnd: z.boolean(),
          credits: z.number().int(),
          extraStorageGb: z.number().int().nonnegative().describe('agent storage bought on top of the plan'),
          byok: ByokState,
          limits: PlanLimits,
          creditPacks: z.array(CreditPack).describe('what `buy-credits` and `GET /api/card/credits` accept'),
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'postBilling',
      method: 'POST',
      path: '/api/billing',
      auth: 'session',
      // Checkout, credit purchases and plan changes: a retry gets the same checkout session, not a second one.
      idempotent: true,
      summary: 'Billing actions: start a plan checkout, enable or disable a BYOK provider key, read usage, buy credits.',
      description:
        '- `create-checkout` `{plan}` → `{url, sessionId}` of a GBP subscription checkout; 402 `PLAN_REQUIRED` for the retired `free` plan; 409 `ALREADY_SUBSCRIBED` while a subscription is active (use `change-plan`; the plan changes only when the card webhook confirms payment).\n' +
        '- `enable-byok` `{provider, apiKey}` → `{success, byok}`; the key is stored envelope-encrypted (bound to the account) and replaces any earlier key for that provider; it is never returned or logged.\n' +
        '- `disable-byok` `{provider}` → `{success, byok}`; 404 when no key is stored for the provider.\n' +
        '- `get-usage` → `{usage}` of the current billing period: credits from the ledger; model tokens, cost and A2A messages per model and per agent; the included allowance.\n' +
        '- `buy-credits` `{price}` → `{url, sessionId, credits}` of a one-off checkout for one of the credit packs `GET /api/billing` lists (400 `UNKNOWN_PRICE` for any other id); credits are added when the card webhook confirms payment.\n' +
        '- `change-plan` `{plan}` → `{success, plan, previousPlan, subscriptionId, status: "pending"}`: the active subscription moves to the plan\'s price at the processor, prorated as it prorates; ' +
        "the account's plan changes when the card webhook confirms. 402 `SUBSCRIPTION_REQUIRED` without an active card subscription; 409 `SAME_PLAN`; a downgrade below what the account holds is 409 " +
        '`PLAN_LIMIT_EXCEEDED` with `current` and `limit` (`{agents, skills}` each) and what to remove first.\n' +
        "- `billing-portal` → `{url}` of the processor's billing portal (update the card, invoices, cancel); 404 `NO_CARD_CUSTOMER` before a first checkout. `GET /api/card/portal` redirects there.\n" +
        CARD_FAILURES,
      body: BillingAction,
      // get-usage: an example any account can run without a card processor.
      example: { action: 'get-usage' },
      responses: {
        200: z.union([
          CheckoutAnswer.extend({ credits: z.number().int().positive().optional().describe('buy-credits only') }),
          z.object({ success: z.literal(true), byok: ByokState }),
          z.object({ usage: Usage }),
          PlanChangeAnswer,
          z.object({ url: z.url() }),
        ]),
        402: ErrorBody,
        404: ErrorBody,
        409: z.union([ErrorBody, z.looseObject({ error: z.string(), code: z.literal('PLAN_LIMIT_EXCEEDED'), current: PlanHoldings, limit: PlanHoldings })]),
        502: ErrorBody,
        503: ErrorBody,
        ...commonErrorResponses,
        400: BadRequest,
      },
    },
    {
      operation: 'getCredits',
      method: 'GET',
      path: '/api/credits',
      auth: 'session',
      summary: "The caller's credit balance and a page of the ledger, newest first.",
      description:
        'Every change of the balance (purchase, referral, usage, refund, adjustment) is one ledger entry written in the same transaction, so the balance always equals the sum of the ledger. ' +
        '`cursor` continues the ledger where the previous page ended (null on the last page).',
      query: z.object({
        limit: z.coerce
          .number()
          .int()
          .min(1)
          .max(CREDITS_LEDGER_MAX_LIMIT)
          .default(CREDITS_LEDGER_DEFAULT_LIMIT)
          .describe(`ledger entries to return, ${CREDITS_LEDGER_DEFAULT_LIMIT} by default, at most ${CREDITS_LEDGER_MAX_LIMIT}`),
        cursor: z.string().max(2048).optional().describe('the `cursor` of the previous page'),
      }),
      responses: {
        200: z.object({
          balance: z.number().int(),
          currency: z.literal('credits'),
          ledger: z.array(LedgerEntry),
          cursor: z.string().nullable(),
        }),
        ...commonErrorResponses,
        400: BadRequest,
      },
    },
    {
      operation: 'cardCheckoutRedirect',
      method: 'GET',
      path: '/api/card/checkout',
      auth: 'session',
      summary: "302 to the card processor's subscription checkout for a plan.",
      description:
        'The checkout prices in GBP (spec 2.16) and carries the account id (`client_reference_id`) and the plan (`metadata.plan`). After payment the processor returns the user to ' +
        '`/settings/billing?checkout=success` (or `=cancelled`); the plan changes only when the card webhook confirms. ' +
        'An unknown plan is 400; the retired `free` plan is 402 `PLAN_REQUIRED`; 409 `ALREADY_SUBSCRIBED` while a subscription is active. ' +
        CARD_FAILURES,
      query: z.object({ plan: RequestedPlan }),
      responses: { 302: RedirectBody, 402: ErrorBody, 409: ErrorBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'cardPortalRedirect',
      method: 'GET',
      path: '/api/card/portal',
      auth: 'session',
      summary: "302 to the card processor's billing portal, where the user updates the card, sees invoices or cancels.",
      description: 'Returns to `/settings/billing`. 404 `NO_CARD_CUSTOMER` before a first checkout. ' + CARD_FAILURES,
      responses: { 302: RedirectBody, 404: ErrorBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'cardCreditsRedirect',
      method: 'GET',
      path: '/api/card/credits',
      auth: 'session',
      summary: "302 to the card processor's one-off checkout for a credit pack.",
      description:
        "`price` is the processor's price id of one of the credit packs the platform sells (`creditPacks` of `GET /api/billing`); any other id is 400 `UNKNOWN_PRICE` (the client never sets an amount). " +
        'Credits are added when the card webhook confirms payment. ' +
        CARD_FAILURES,
      query: z.object({ price: PriceId }),
      responses: { 302: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses, 400: BadRequest },
    },
    {
      operation: 'cardStorageUpgrade',
      method: 'POST',
      path: '/api/card/storage-upgrade',
      auth: 'session',
      // A retried upgrade gets the same checkout session.
      idempotent: true,
      summary: 'Start a one-off checkout for extra agent storage on top of the plan.',
      description:
        'Answers `{url, sessionId}` of a checkout for `storageGb` GB; the storage is added to the account (`extraStorageGb` of `GET /api/billing`) when the card webhook confirms payment. ' +
        '402 `SUBSCRIPTION_REQUIRED` without an active subscription. ' +
        CARD_FAILURES,
      body: z.strictObject({
        storageGb: z.number().int().min(1).max(STORAGE_UPGRADE_MAX_GB).describe(`extra storage in GB, at most ${STORAGE_UPGRADE_MAX_GB}`),
      }),
      example: { storageGb: 4 },
      responses: { 200: CheckoutAnswer, 402: ErrorBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'createGatewayCardPayment',
      method: 'GET',
      path: '/api/v1/payments/card/create',
      auth: 'optional',
      summary:
        "The `checkoutUrl` of a gateway 402 challenge: 303 to a one-off card checkout for one call at the plugin's price, or to the subscription checkout.",
      description:
        'Without a session (the 402 reaches callers without an account): 303 to a one-off checkout in payment mode for one call of `plugin` at its card price ' +
        '(`GATEWAY_CARD_PRICES` in pence, else the token price of `GATEWAY_PRICES` × `GATEWAY_CARD_RATE` rounded up to a penny, at least 30p; GBP, the billing currency). ' +
        'After payment the processor returns the payer to `/gateway/receipt?plugin=<id>&checkout=success#receipt=gwr_…`: the fragment holds the receipt token. ' +
        'Once the card webhook confirms the payment, `POST /api/v1/gateway` with `Authorization: Bearer gwr_…` pays one call of that plugin (valid 24 h, single use). ' +
        'With a session and no subscription: 303 to a subscription checkout for `plan` (default `label`, the smallest plan) with `metadata.plugin`; ' +
        'with one in force: 303 straight back to the app (`/settings/billing?plugin=<id>`). An unknown plugin is 400. ' +
        CARD_FAILURES,
      query: z.object({ plugin: GatewayPluginIdSchema, plan: z._default(PlanName, 'label') }),
      responses: { 303: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'getLegacyCheckout',
      method: 'GET',
      path: '/api/checkout',
      auth: 'none',
      deprecated: true,
      summary: 'Retired checkout: always 410 Gone; use `GET /api/card/checkout`.',
      responses: { 410: Gone, ...commonErrorResponses },
    },
    {
      operation: 'postLegacyCheckout',
      method: 'POST',
      path: '/api/checkout',
      auth: 'none',
      deprecated: true,
      rawBody: true,
      summary: 'Retired checkout: always 410 Gone; use `GET /api/card/checkout`.',
      description: 'Whatever the body (it is not parsed), the answer is 410.',
      responses: { 410: Gone, ...commonErrorResponses },
    },
    {
      operation: 'cardWebhook',
      method: 'POST',
      path: '/api/webhooks/card',
      auth: 'none',
      rawBody: true,
      handlerValidates: true,
      openBody: true,
      summary: "The card processor's signed webhook: subscription and payment events.",
      description:
        "The processor's `stripe-signature` header is verified over the exact raw body with `CARD_WEBHOOK_SECRET` and a 5-minute timestamp tolerance; a missing, wrong or stale signature is 400 `INVALID_SIGNATURE` " +
        'and nothing is processed (503 `CARD_NOT_CONFIGURED` when no secret is configured). Each event id takes effect once (a redelivery answers 200 without effect), ' +
        'and an event older than the stored state never overwrites it, so deliveries may come in any order:\n' +
        '- `checkout.session.completed` / `checkout.session.async_payment_succeeded`, once paid: a subscription checkout activates `metadata.plan` for `client_reference_id` with the subscription id; ' +
        'a credit pack (`metadata.kind` `credits`) adds its credits with one ledger entry per session; a storage checkout adds its GB; ' +
        'a one-off gateway call (`metadata.kind` `gateway-call`, no account) stores a prepaid single-use receipt for `metadata.plugin` under `metadata.receipt` (the SHA-256 of its token), redeemable for 24 h.\n' +
        '- `customer.subscription.created` / `.updated` / `.deleted`: status (active when `active` or `trialing`), plan (`metadata.plan`, else the plan of the price), billing period and cancel-at-period-end, for `metadata.userId` ' +
        '(else the account of the customer). A cancellation of an older subscription does not end a newer active one.\n' +
        "Other event types, and events for unknown accounts, are acknowledged and ignored. The event is the processor's own format, so its body is open.",
      body: z.looseObject({
        id: z.string(),
        type: z.string(),
        created: z.number().int().optional(),
        data: z.looseObject({ object: z.looseObject({}) }),
      }),
      example: {
        id: 'evt_1QbX2cL4mN8pRsTu',
        object: 'event',
        type: 'checkout.session.completed',
        created: 1736935200,
        livemode: false,
        data: {
          object: {
            id: 'cs_test_a1B2c3D4e5F6',
            object: 'checkout.session',
            mode: 'subscription',
            customer: 'cus_R4nD0mCu5t0m3r',
            subscription: 'sub_1QbX2cL4mN8pRsTu',
            client_reference_id: 'usr_7Hk2mQ9xLp',
            metadata: { userId: 'usr_7Hk2mQ9xLp', plan: 'solo', kind: 'subscription' },
            payment_status: 'paid',
          },
        },
      },
      responses: {
        200: z.object({ received: z.literal(true) }),
        503: ErrorBody,
        ...commonErrorResponses,
        400: z.union([ValidationErrorBody, ErrorBody]),
      },
    },
  ],
});
