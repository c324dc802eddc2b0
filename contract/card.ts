import * as z from 'zod/mini';
import { PlanName, RedirectBody } from './account-fields';
import { CARD_FAILURES, CheckoutAnswer, PriceId, RequestedPlan } from './checkout';
import { commonErrorResponses, ErrorBody, ValidationErrorBody } from './common';
import { GatewayPluginIdSchema } from './gateway';
import { defineGroup, lazySchema } from './route';

export const STORAGE_UPGRADE_MAX_GB = 64;

const BadRequest = lazySchema(() => z.union([ValidationErrorBody(), ErrorBody()]));

/**
 * The routes that call the card processor on every request (checkout and portal redirects, the
 * storage checkout, the gateway's card payment) and its signed webhook: apart from the billing
 * group, so that only this function bundles the processor's SDK, which is large.
 */
export const cardContract = defineGroup({
  group: 'card',
  description:
    "The card processor: redirects to its checkout and billing portal, the storage checkout, the gateway's card payment and its signed webhook (spec 2.16, 4.12, 7).",
  dynamoOnly: false,
  routes: [
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
      query: () => z.object({ plan: RequestedPlan() }),
      responses: () => ({ 302: RedirectBody(), 402: ErrorBody(), 409: ErrorBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'cardPortalRedirect',
      method: 'GET',
      path: '/api/card/portal',
      auth: 'session',
      summary: "302 to the card processor's billing portal, where the user updates the card, sees invoices or cancels.",
      description: 'Returns to `/settings/billing`. 404 `NO_CARD_CUSTOMER` before a first checkout. ' + CARD_FAILURES,
      responses: () => ({ 302: RedirectBody(), 404: ErrorBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses() }),
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
      query: () => z.object({ price: PriceId() }),
      responses: () => ({ 302: RedirectBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses(), 400: BadRequest() }),
    },
    {
      operation: 'cardStorageUpgrade',
      method: 'POST',
      path: '/api/card/storage-upgrade',
      auth: 'session',
      // A retried upgrade gets the same checkout session.
      policy: { idempotent: true },
      summary: 'Start a one-off checkout for extra agent storage on top of the plan.',
      description:
        'Answers `{url, sessionId}` of a checkout for `storageGb` GB; the storage is added to the account (`extraStorageGb` of `GET /api/billing`) when the card webhook confirms payment. ' +
        '402 `SUBSCRIPTION_REQUIRED` without an active subscription. ' +
        CARD_FAILURES,
      body: () =>
        z.strictObject({
          storageGb: z
            .number()
            .check(z.int(), z.minimum(1), z.maximum(STORAGE_UPGRADE_MAX_GB), z.describe(`extra storage in GB, at most ${STORAGE_UPGRADE_MAX_GB}`)),
        }),
      example: { storageGb: 4 },
      responses: () => ({ 200: CheckoutAnswer(), 402: ErrorBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses() }),
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
      query: () => z.object({ plugin: GatewayPluginIdSchema(), plan: z._default(PlanName(), 'label') }),
      responses: () => ({ 303: RedirectBody(), 502: ErrorBody(), 503: ErrorBody(), ...commonErrorResponses() }),
    },
    {
      operation: 'cardWebhook',
      method: 'POST',
      path: '/api/webhooks/card',
      auth: 'none',
      bodyHandling: { kind: 'raw', validatedBy: 'handler', open: true },
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
      body: () =>
        z.looseObject({
          id: z.string(),
          type: z.string(),
          created: z.optional(z.number().check(z.int())),
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
      responses: () => ({
        200: z.object({ received: z.literal(true) }),
        503: ErrorBody(),
        ...commonErrorResponses(),
        400: z.union([ValidationErrorBody(), ErrorBody()]),
      }),
    },
  ],
});
