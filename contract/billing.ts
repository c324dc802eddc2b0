import * as z from 'zod/mini';
import { AccountPlan } from './account-fields';
import { CARD_FAILURES, CheckoutAnswer, PriceId, RequestedPlan } from './checkout';
import { commonErrorResponses, ErrorBody, IsoDate, ValidationErrorBody } from './common';
import { AiProvider } from './provision';
import { PLAN_NAMES } from './plan-names';
import { defineGroup, lazySchema } from './route';

export const SubscriptionStatus = lazySchema(() =>
  z
    .enum(['none', 'active', 'trialing', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'])
    .check(z.describe('state of the card subscription as the processor last reported it; `none` when the account never subscribed')),
);

/** Providers whose keys a user may bring: the aggregator and the four model vendors of spec 4.5. */
export const ByokProvider = lazySchema(() => AiProvider().check(z.describe('AI provider id')));

export const ByokState = lazySchema(() =>
  z.object({
    enabled: z.boolean().check(z.describe('true when at least one provider key is stored')),
    providers: z
      .array(
        z.object({
          provider: ByokProvider(),
          keyPreview: z.string().check(z.describe('the last four characters of the key, e.g. `…x9Qa`; the key itself is never returned')),
          updatedAt: IsoDate(),
        }),
      )
      .check(z.describe('providers with a stored key')),
  }),
);

const Count = () => z.number().check(z.int(), z.nonnegative());

export const PlanLimits = lazySchema(() =>
  z
    .object({
      agents: Count(),
      skills: Count(),
      a2aPerDay: Count().check(z.describe('agent-to-agent messages per day')),
      memory: z.string().check(z.regex(/^\d+ GB$/), z.describe('agent memory as the plan table lists it, e.g. `8 GB`')),
      models: z.array(z.string()).check(z.describe('model ids (`<vendor>/<model>`) the plan may use')),
    })
    .check(z.describe('limits of the plan table (spec 2.16); zeros and no models without a plan; admins get `network` limits')),
);

export const PlanOffer = lazySchema(() =>
  z
    .object({
      plan: z.enum(PLAN_NAMES),
      price: z.object({
        amount: z.number().check(z.nonnegative(), z.describe('per month, in `currency` units')),
        currency: z.string().check(z.describe('ISO 4217, e.g. `USD`: the plan table lists its prices in it')),
        interval: z.literal('month'),
      }),
      agents: Count(),
      skills: Count(),
    })
    .check(z.describe('one plan on sale, as the plan table lists it (spec 2.16): what `create-checkout` and `change-plan` take')),
);

export const CREDITS_LEDGER_DEFAULT_LIMIT = 20;
export const CREDITS_LEDGER_MAX_LIMIT = 100;

export const CreditPack = lazySchema(() =>
  z.object({ price: PriceId().check(z.describe("the processor's price id")), credits: z.number().check(z.int(), z.positive()) }),
);

const UsageTotals = lazySchema(() =>
  z.object({
    promptTokens: z.number().check(z.int()),
    completionTokens: z.number().check(z.int()),
    totalTokens: z.number().check(z.int()),
    costUsd: z.number().check(z.nonnegative()),
    credits: z.number().check(z.int(), z.describe('credits charged (0 for allowance, BYOK and admin calls)')),
    calls: z.number().check(z.int()),
    fallbackCalls: z
      .number()
      .check(z.int(), z.describe("of `calls`, those answered as another model's fallback (the model asked for failed before its first token)")),
  }),
);

export const Usage = lazySchema(() =>
  z.object({
    periodStart: IsoDate().check(z.describe('start of the billing period (the calendar month, UTC, without a subscription period)')),
    periodEnd: IsoDate(),
    credits: z.object({
      balance: z.number().check(z.int()),
      spent: z.number().check(z.int(), z.nonnegative(), z.describe('credits spent on usage this period (sum of the ledger `usage` entries)')),
      added: z.number().check(z.int(), z.nonnegative(), z.describe('credits bought, granted or refunded this period')),
      usageEntries: z.number().check(z.int(), z.nonnegative(), z.describe('number of `usage` ledger entries this period')),
    }),
    limits: PlanLimits(),
    tokens: z
      .object({ prompt: z.number().check(z.int()), completion: z.number().check(z.int()), total: z.number().check(z.int()) })
      .check(z.describe('model tokens of the period')),
    costUsd: z.number().check(z.nonnegative(), z.describe('model cost of the period at catalogue prices, USD')),
    allowance: z
      .object({ includedCredits: z.number().check(z.int()), usedCredits: z.number().check(z.int()) })
      .check(z.describe("the plan's included model spend of the period, in credits, and how much of it is used; past it calls are debited from the balance")),
    a2aMessages: z.number().check(z.int(), z.nonnegative(), z.describe('agent-to-agent messages of the period')),
    models: z.array(z.extend(UsageTotals(), { model: z.string() })).check(z.describe('per model')),
    agents: z
      .array(
        z.extend(UsageTotals(), {
          agentId: z.nullable(z.string()).check(z.describe('null: calls made outside any agent (POST /api/ai/chat)')),
          a2aMessages: z.number().check(z.int()),
        }),
      )
      .check(z.describe('per agent')),
    days: z
      .array(z.extend(UsageTotals(), { day: z.string().check(z.describe('`yyyy-mm-dd`, UTC')), model: z.string() }))
      .check(z.describe('per day and model, oldest first (days without calls are absent)')),
  }),
);

const BillingAction = lazySchema(() =>
  z.discriminatedUnion('action', [
    z.strictObject({ action: z.literal('create-checkout'), plan: RequestedPlan() }),
    z.strictObject({
      action: z.literal('enable-byok'),
      provider: ByokProvider(),
      apiKey: z
        .string()
        .check(z.minLength(8), z.maxLength(512), z.regex(/^\S+$/, 'no whitespace'), z.describe('stored envelope-encrypted; never returned or logged')),
    }),
    z.strictObject({ action: z.literal('disable-byok'), provider: ByokProvider() }),
    z.strictObject({ action: z.literal('get-usage') }),
    z.strictObject({ action: z.literal('buy-credits'), price: PriceId().check(z.describe('price id of one of the credit packs `GET /api/billing` lists')) }),
    z.strictObject({ action: z.literal('change-plan'), plan: RequestedPlan() }),
    z.strictObject({ action: z.literal('billing-portal') }),
  ]),
);

const PlanHoldings = lazySchema(() => z.object({ agents: z.number().check(z.int()), skills: z.number().check(z.int()) }));
const PlanChangeAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    plan: z.string().check(z.describe('the plan asked for; the account moves to it when the card webhook confirms')),
    previousPlan: z.nullable(z.string()),
    subscriptionId: z.string(),
    status: z.literal('pending'),
  }),
);

export const LedgerEntry = lazySchema(() =>
  z.object({
    id: z.string(),
    delta: z.number().check(z.int(), z.describe('credits added (positive) or spent (negative)')),
    reason: z.enum(['purchase', 'referral', 'usage', 'refund', 'adjustment']),
    note: z.optional(z.string()),
    createdAt: IsoDate(),
  }),
);

const Gone = lazySchema(() => z.looseObject({ error: z.string(), code: z.literal('GONE'), use: z.string().check(z.describe('the replacement route')) }));

const BadRequest = lazySchema(() => z.union([ValidationErrorBody(), ErrorBody()]));

export const billingContract = defineGroup({
  group: 'billing',
  description:
    'Plans, card subscriptions, bring-your-own-key and credits (spec 2.16, 4.14, 7); the redirects to the card processor and its webhook are the card group.',
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
      responses: () => ({
        200: z.object({
          plan: AccountPlan(),
          status: SubscriptionStatus(),
          active: z.boolean().check(z.describe('true while the subscription is `active` or `trialing` (always true for admins)')),
          currentPeriodEnd: z.nullable(IsoDate()),
          cancelAtPeriodEnd: z.boolean(),
          credits: z.number().check(z.int()),
          extraStorageGb: z.number().check(z.int(), z.nonnegative(), z.describe('agent storage bought on top of the plan')),
          byok: ByokState(),
          limits: PlanLimits(),
          creditPacks: z.array(CreditPack()).check(z.describe('what `buy-credits` and `GET /api/card/credits` accept')),
          plans: z.array(PlanOffer()).check(z.describe('the plans on sale with their prices, smallest first')),
        }),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'postBilling',
      method: 'POST',
      path: '/api/billing',
      auth: 'session',
      // Checkout, credit purchases and plan changes: a retry gets the same checkout session, not a second one.
      policy: { idempotent: true },
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
      responses: () => ({
        200: z.union([
          z.extend(CheckoutAnswer(), { credits: z.optional(z.number().check(z.int(), z.positive())).check(z.describe('buy-credits only')) }),
          z.object({ success: z.literal(true), byok: ByokState() }),
          z.object({ usage: Usage() }),
          PlanChangeAnswer(),
          z.object({ url: z.url() }),
        ]),
        402: ErrorBody(),
        404: ErrorBody(),
        409: z.union([
          ErrorBody(),
          z.looseObject({ error: z.string(), code: z.literal('PLAN_LIMIT_EXCEEDED'), current: PlanHoldings(), limit: PlanHoldings() }),
        ]),
        502: ErrorBody(),
        503: ErrorBody(),
        ...commonErrorResponses(),
        400: BadRequest(),
      }),
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
      query: () =>
        z.object({
          limit: z
            ._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(CREDITS_LEDGER_MAX_LIMIT)), CREDITS_LEDGER_DEFAULT_LIMIT)
            .check(z.describe(`ledger entries to return, ${CREDITS_LEDGER_DEFAULT_LIMIT} by default, at most ${CREDITS_LEDGER_MAX_LIMIT}`)),
          cursor: z.optional(z.string().check(z.maxLength(2048))).check(z.describe('the `cursor` of the previous page')),
        }),
      responses: () => ({
        200: z.object({
          balance: z.number().check(z.int()),
          currency: z.literal('credits'),
          ledger: z.array(LedgerEntry()),
          cursor: z.nullable(z.string()),
        }),
        ...commonErrorResponses(),
        400: BadRequest(),
      }),
    },
    {
      operation: 'getLegacyCheckout',
      method: 'GET',
      path: '/api/checkout',
      auth: 'none',
      deprecated: true,
      summary: 'Retired checkout: always 410 Gone; use `GET /api/card/checkout`.',
      responses: () => ({ 410: Gone(), ...commonErrorResponses() }),
    },
    {
      operation: 'postLegacyCheckout',
      method: 'POST',
      path: '/api/checkout',
      auth: 'none',
      deprecated: true,
      bodyHandling: { kind: 'raw' },
      summary: 'Retired checkout: always 410 Gone; use `GET /api/card/checkout`.',
      description: 'Whatever the body (it is not parsed), the answer is 410.',
      responses: () => ({ 410: Gone(), ...commonErrorResponses() }),
    },
  ],
});
