import * as z from 'zod';
import { AccountPlan, PlanName, RedirectBody } from './accounts';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate, ValidationErrorBody } from './route';

export const SubscriptionStatus = z
  .enum(['none', 'active', 'trialing', 'past_due', 'canceled', 'incomplete', 'unpaid'])
  .describe('state of the card subscription; `none` when the account never subscribed');

/** Providers whose keys a user may bring (the aggregator and the four model vendors of spec 4.5). */
export const ByokProvider = z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, 'lower-case provider id').describe('AI provider id, e.g. `openrouter`');

export const ByokState = z.object({
  enabled: z.boolean().describe('true when at least one provider key is stored'),
  providers: z.array(ByokProvider).describe('providers with a stored key; keys themselves are never returned'),
});

export const PlanLimits = z
  .object({
    agents: z.number().int().nonnegative(),
    skills: z.number().int().nonnegative(),
    a2aPerDay: z.number().int().nonnegative().describe('agent-to-agent messages per day'),
    memory: z.string().regex(/^\d+ GB$/).describe('agent memory as the plan table lists it, e.g. `8 GB`'),
    models: z.array(z.string()).describe('model ids (`<vendor>/<model>`) the plan may use'),
  })
  .describe('limits of the plan table (spec 2.16); zeros and no models without a plan; admins get `network` model access');

export const CREDITS_PURCHASE_MIN = 100;
export const CREDITS_PURCHASE_MAX = 1_000_000;
export const CREDITS_LEDGER_DEFAULT_LIMIT = 20;
export const CREDITS_LEDGER_MAX_LIMIT = 100;
export const STORAGE_UPGRADE_MAX_GB = 64;

const CheckoutAnswer = z.object({
  url: z.url({ protocol: /^https?$/ }).describe("the card processor's hosted checkout page"),
  sessionId: z.string().describe('checkout session id at the processor'),
});

export const Usage = z.object({
  periodStart: IsoDate.nullable(),
  periodEnd: IsoDate.nullable(),
  agents: z.object({ used: z.number().int(), limit: z.number().int() }),
  skills: z.object({ used: z.number().int(), limit: z.number().int() }),
  a2aMessagesToday: z.object({ used: z.number().int(), limit: z.number().int() }),
  credits: z.object({ balance: z.number().int(), spentThisPeriod: z.number().int() }),
  tokens: z.object({ prompt: z.number().int(), completion: z.number().int(), total: z.number().int() }).describe('model tokens this period'),
});

const BillingAction = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('create-checkout'), plan: PlanName }),
  z.strictObject({
    action: z.literal('enable-byok'),
    provider: ByokProvider,
    apiKey: z.string().min(8).max(512).describe('stored envelope-encrypted; never returned or logged'),
  }),
  z.strictObject({ action: z.literal('disable-byok'), provider: ByokProvider }),
  z.strictObject({ action: z.literal('get-usage') }),
  z.strictObject({
    action: z.literal('buy-credits'),
    amount: z.number().int().min(CREDITS_PURCHASE_MIN).max(CREDITS_PURCHASE_MAX).describe('credits to buy'),
  }),
]);

export const LedgerEntry = z.object({
  id: z.string(),
  delta: z.number().int().describe('credits added (positive) or spent (negative)'),
  reason: z.enum(['purchase', 'referral', 'usage', 'refund', 'adjustment']),
  createdAt: IsoDate,
});

const Gone = z.looseObject({ error: z.string(), code: z.literal('GONE'), use: z.string().describe('the replacement route') });

const BadRequest = z.union([ValidationErrorBody, ErrorBody]);

export const billingContract = defineGroup({
  group: 'billing',
  description: 'Plans, card subscriptions, bring-your-own-key, credits and the card webhook (spec 4.14).',
  dynamoOnly: false,
  routes: [
    {
      operation: 'getBilling',
      method: 'GET',
      path: '/api/billing',
      auth: 'session',
      summary: "The caller's plan, subscription, credits, BYOK state and plan limits.",
      responses: {
        200: z.object({
          plan: AccountPlan,
          status: SubscriptionStatus,
          currentPeriodEnd: IsoDate.nullable(),
          cancelAtPeriodEnd: z.boolean(),
          credits: z.number().int(),
          byok: ByokState,
          limits: PlanLimits,
        }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'postBilling',
      method: 'POST',
      path: '/api/billing',
      auth: 'session',
      summary: 'Billing actions: start a plan checkout, enable or disable a BYOK provider key, read usage, buy credits.',
      description:
        '- `create-checkout` → `{url, sessionId}` of a subscription checkout for `plan` (409 `ALREADY_SUBSCRIBED` when that plan is already active). The plan changes only when the card webhook confirms payment.\n' +
        '- `enable-byok` → `{success, byok}`; the key replaces any earlier key for that provider (400 for a provider the platform does not support).\n' +
        '- `disable-byok` → `{success, byok}`; 404 when no key is stored for the provider.\n' +
        '- `get-usage` → `{usage}` for the current billing period.\n' +
        `- \`buy-credits\` → \`{url, sessionId, amount}\` of a one-off checkout for \`amount\` credits (${CREDITS_PURCHASE_MIN}–${CREDITS_PURCHASE_MAX}); credits are added when the card webhook confirms payment.\n` +
        '502 when the card processor fails; 503 when card payments are not configured.',
      body: BillingAction,
      example: { action: 'create-checkout', plan: 'solo' },
      responses: {
        200: z.union([
          CheckoutAnswer.extend({ amount: z.number().int().optional().describe('buy-credits only') }),
          z.object({ success: z.literal(true), byok: ByokState }),
          z.object({ usage: Usage }),
        ]),
        404: ErrorBody,
        409: ErrorBody,
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
      summary: "The caller's credit balance and the latest ledger entries, newest first.",
      query: z.object({
        limit: z.coerce
          .number()
          .int()
          .min(1)
          .max(CREDITS_LEDGER_MAX_LIMIT)
          .default(CREDITS_LEDGER_DEFAULT_LIMIT)
          .describe(`ledger entries to return, ${CREDITS_LEDGER_DEFAULT_LIMIT} by default, at most ${CREDITS_LEDGER_MAX_LIMIT}`),
      }),
      responses: {
        200: z.object({ balance: z.number().int(), currency: z.literal('credits'), ledger: z.array(LedgerEntry) }),
        ...commonErrorResponses,
      },
    },
    {
      operation: 'cardCheckoutRedirect',
      method: 'GET',
      path: '/api/card/checkout',
      auth: 'session',
      summary: "302 to the card processor's subscription checkout for a plan.",
      description:
        'Checkout prices in GBP (spec 2.16). After payment the processor returns the user to `/settings/billing?checkout=success` (or `=cancelled`); the plan changes only when the card webhook confirms. ' +
        'An unknown plan is 400; 502 when the processor fails; 503 when card payments are not configured.',
      query: z.object({ plan: PlanName }),
      responses: { 302: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
    },
    {
      operation: 'cardCreditsRedirect',
      method: 'GET',
      path: '/api/card/credits',
      auth: 'session',
      summary: "302 to the card processor's one-off checkout for a credit pack.",
      description:
        "`price` is the processor's price id of one of the credit packs the platform is configured to sell; any other id is 400 `UNKNOWN_PRICE` (the client never sets an amount). " +
        'Credits are added when the card webhook confirms payment. 502 when the processor fails; 503 when card payments are not configured.',
      query: z.object({ price: z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/, 'a price id') }),
      responses: { 302: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses, 400: BadRequest },
    },
    {
      operation: 'cardStorageUpgrade',
      method: 'POST',
      path: '/api/card/storage-upgrade',
      auth: 'session',
      summary: 'Start a checkout for extra agent storage on top of the plan.',
      description:
        'Answers `{url, sessionId}` of a checkout adding `storageGb` to the subscription; the storage is granted when the card webhook confirms. ' +
        '402 `SUBSCRIPTION_REQUIRED` without an active subscription; 502 when the processor fails; 503 when card payments are not configured.',
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
      auth: 'session',
      summary: 'The `checkoutUrl` of a gateway 402 challenge: 302 to a card checkout that pays for a gateway plugin.',
      description:
        'Pays by card subscription for gateway calls to `plugin` (spec 4.12); an unknown plugin is 400. Callers that already hold an active subscription are sent straight back to the app (302). ' +
        '502 when the processor fails; 503 when card payments are not configured.',
      query: z.object({ plugin: z.enum(['agent', 'generate-text', 'tts', 'stt']) }),
      responses: { 302: RedirectBody, 502: ErrorBody, 503: ErrorBody, ...commonErrorResponses },
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
        "The processor's signature header is verified over the exact raw body with the webhook secret, with a 5-minute timestamp tolerance; a missing or bad signature is 400 `INVALID_SIGNATURE` " +
        'and nothing is processed. Events are processed once per event id (a redelivery answers 200 again without effect): ' +
        '`checkout.session.completed` (activates the plan, adds bought credits or storage), `customer.subscription.updated` / `customer.subscription.deleted` (status, period end, cancel at period end, plan), ' +
        '`invoice.payment_failed` (status `past_due`). Other event types are acknowledged and ignored. The event is the processor\'s own format, so its body is open.',
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
            metadata: { plan: 'solo' },
            payment_status: 'paid',
          },
        },
      },
      responses: { 200: z.object({ received: z.literal(true) }), ...commonErrorResponses, 400: z.union([ValidationErrorBody, ErrorBody]) },
    },
  ],
});
