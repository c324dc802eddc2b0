import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId, SuccessTrue, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';
import { ACCOUNT_EVENT_TYPES } from './webhook-events';

// Defined apart so the webhook delivery worker reads the event names without building this group.
export { ACCOUNT_EVENT_TYPES };

/** Most webhook endpoints one account may register; one more answers 400 `ENDPOINT_LIMIT`. */
export const WEBHOOK_ENDPOINTS_PER_ACCOUNT = 10;

export const WebhookEndpointRecord = lazySchema(() =>
  z.object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()).check(z.describe('the event types sent to it; `instance.*` and `agent.*` select a family')),
    createdAt: IsoDate(),
    enabled: z.boolean().check(z.describe('false once disabled: after failing without a success for 3 days, or by its owner; nothing is sent to it')),
    disabledAt: z.optional(IsoDate()),
    disabledReason: z.optional(z.string()),
    failingSince: z.optional(IsoDate()).check(z.describe('the first failed attempt since the last success')),
  }),
);

const EventFilter = lazySchema(() => z.union([z.enum(ACCOUNT_EVENT_TYPES), z.enum(['instance.*', 'agent.*', 'budget.*', 'schedule.*', 'model.*'])]));

export const CreateWebhookEndpointBody = lazySchema(() =>
  z.strictObject({
    url: z
      .url({ protocol: /^https?$/ })
      .check(z.maxLength(2048), z.describe('where events are POSTed; in AWS it must be https and resolve to a public address')),
    events: z
      .optional(z.array(EventFilter()).check(z.minLength(1), z.maxLength(ACCOUNT_EVENT_TYPES.length + 5)))
      .check(z.describe('default: every account event')),
  }),
);

export const WebhookDeliveryRecord = lazySchema(() =>
  z.object({
    eventId: z.string(),
    type: z.string(),
    attempt: z.number().check(z.int(), z.describe('1 for the first try, more for the retries')),
    outcome: z.enum(['delivered', 'failed']),
    statusCode: z.optional(z.number().check(z.int())).check(z.describe('what the endpoint answered, when it answered')),
    error: z.optional(z.string()),
    at: IsoDate(),
    durationMs: z.optional(z.number().check(z.int())).check(z.describe('how long the attempt took')),
    nextAttemptAt: z.optional(IsoDate()).check(z.describe('when the next automatic attempt is due; absent after a success or the last attempt')),
    manual: z.optional(z.boolean()).check(z.describe('true for a redelivery the owner asked for')),
  }),
);

const IdParams = lazySchema(() => z.strictObject({ id: ResourceId() }));
const DeliveryParams = lazySchema(() => z.strictObject({ id: ResourceId(), eventId: ResourceId() }));

/** The retry schedule as documented (WEBHOOK_RETRY_SCHEDULE_MS changes it). */
const RETRY_SCHEDULE_TEXT = 'at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure (8 attempts over about 27.6 hours)';

export const webhooksContract = defineGroup({
  group: 'webhooks',
  description: [
    "The account's own webhook endpoints: lifecycle events of its instance and agents (`instance.*`, `agent.*`, listed at",
    '`GET /api/instance/{userId}/events`) are POSTed to each, signed the Standard Webhooks way (`webhook-id` = the event id,',
    "`webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` with the endpoint's `whsec_` secret, shown once at registration).",
    `A failed delivery (no 2xx within 5 s) is retried with the same \`webhook-id\` ${RETRY_SCHEDULE_TEXT}; every attempt is in the endpoint's delivery log.`,
    'An endpoint whose deliveries fail without a success for 3 days is disabled and its owner gets one email; `PATCH` it with `{"enabled": true}` to turn it back on.',
    `At most ${WEBHOOK_ENDPOINTS_PER_ACCOUNT} endpoints per account. An endpoint id that is not the caller's answers 404.`,
  ].join(' '),
  dynamoOnly: false,
  routes: [
    {
      operation: 'listWebhookEndpoints',
      method: 'GET',
      path: '/api/webhooks/endpoints',
      auth: 'session',
      summary: "List the caller's webhook endpoints (never their secrets).",
      responses: () => ({ ...commonErrorResponses(), 200: z.object({ endpoints: z.array(WebhookEndpointRecord()) }) }),
    },
    {
      operation: 'createWebhookEndpoint',
      method: 'POST',
      path: '/api/webhooks/endpoints',
      auth: 'session',
      summary: 'Register a webhook endpoint; its signing secret is returned once.',
      description: `400 \`ENDPOINT_LIMIT\` at ${WEBHOOK_ENDPOINTS_PER_ACCOUNT} endpoints; 400 \`URL_NOT_ALLOWED\` for a URL the platform may not call.`,
      body: CreateWebhookEndpointBody,
      example: { url: 'https://hooks.example.com/agent-platform', events: ['instance.*'] },
      responses: () => ({
        ...commonErrorResponses(),
        201: z.object({ endpoint: WebhookEndpointRecord(), secret: z.string().check(z.regex(/^whsec_/)) }),
        400: z.union([ValidationErrorBody(), ErrorBody()]),
      }),
    },
    {
      operation: 'deleteWebhookEndpoint',
      method: 'DELETE',
      path: '/api/webhooks/endpoints/{id}',
      auth: 'session',
      summary: 'Remove a webhook endpoint; nothing more is sent to it.',
      params: IdParams,
      responses: () => ({ ...commonErrorResponses(), 200: SuccessTrue(), 404: ErrorBody() }),
    },
    {
      operation: 'updateWebhookEndpoint',
      method: 'PATCH',
      path: '/api/webhooks/endpoints/{id}',
      auth: 'session',
      summary: 'Enable or disable a webhook endpoint.',
      description:
        '`{"enabled": true}` turns on an endpoint that was disabled (by its owner, or after 3 days of failed deliveries) and clears its failure streak; ' +
        'events from then on are sent to it (earlier ones can be sent again with the redeliver route). `{"enabled": false}` stops deliveries.',
      params: IdParams,
      body: () => z.strictObject({ enabled: z.boolean() }),
      example: { enabled: true },
      responses: () => ({ ...commonErrorResponses(), 200: z.object({ endpoint: WebhookEndpointRecord() }), 400: ValidationErrorBody(), 404: ErrorBody() }),
    },
    {
      operation: 'listWebhookDeliveries',
      method: 'GET',
      path: '/api/webhooks/endpoints/{id}/deliveries',
      auth: 'session',
      summary: 'The delivery log of one endpoint, newest first (kept 30 days).',
      params: IdParams,
      query: () =>
        z.strictObject({
          limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100)), 50),
          cursor: z.optional(z.string().check(z.maxLength(2048))).check(z.describe('the `cursor` of the previous page')),
        }),
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({ deliveries: z.array(WebhookDeliveryRecord()), cursor: z.nullable(z.string()) }),
        404: ErrorBody(),
      }),
    },
    {
      operation: 'redeliverWebhookEvent',
      method: 'POST',
      path: '/api/webhooks/endpoints/{id}/deliveries/{eventId}/redeliver',
      auth: 'session',
      summary: 'Send one event to one endpoint again, with the same `webhook-id`.',
      description:
        'Queues one new attempt, outside the automatic schedule, whether the event was delivered or not; its outcome lands in the delivery log with `manual: true`. ' +
        "404 when the endpoint or the event (one this endpoint was sent in the last 30 days) is not the caller's; 409 `ENDPOINT_DISABLED` for a disabled endpoint (enable it first).",
      params: DeliveryParams,
      responses: () => ({
        ...commonErrorResponses(),
        202: z.object({ success: z.literal(true), endpointId: z.string(), eventId: z.string() }),
        404: ErrorBody(),
        409: ErrorBody(),
      }),
    },
  ],
});
