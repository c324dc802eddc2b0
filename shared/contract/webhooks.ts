import * as z from 'zod';
import { ResourceId } from './memory';
import { commonErrorResponses, defineGroup, ErrorBody, IsoDate, SuccessTrue, ValidationErrorBody } from './route';

/** Most webhook endpoints one account may register; one more answers 400 `ENDPOINT_LIMIT`. */
export const WEBHOOK_ENDPOINTS_PER_ACCOUNT = 10;

/** The account events an endpoint can take (the operator's own endpoints get `user.*`). */
export const ACCOUNT_EVENT_TYPES = [
  'instance.requested',
  'instance.launching',
  'instance.running',
  'instance.unhealthy',
  'instance.stopped',
  'instance.error',
  'instance.superseded',
  'instance.rolled_back',
  'agent.running',
  'agent.error',
  // issue 22: budgets and scheduled prompts
  'agent.paused',
  'agent.resumed',
  'budget.warning',
  'budget.exceeded',
  'schedule.run',
  'schedule.skipped',
] as const;

export const WebhookEndpointRecord = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).describe('the event types sent to it; `instance.*` and `agent.*` select a family'),
  createdAt: IsoDate,
});

const EventFilter = z.union([z.enum(ACCOUNT_EVENT_TYPES), z.enum(['instance.*', 'agent.*', 'budget.*', 'schedule.*'])]);

export const CreateWebhookEndpointBody = z.strictObject({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe('where events are POSTed; in AWS it must be https and resolve to a public address'),
  events: z
    .array(EventFilter)
    .min(1)
    .max(ACCOUNT_EVENT_TYPES.length + 4)
    .optional()
    .describe('default: every account event'),
});

export const WebhookDeliveryRecord = z.object({
  eventId: z.string(),
  type: z.string(),
  attempt: z.number().int().describe('1 for the first try, more for the retries'),
  outcome: z.enum(['delivered', 'failed']),
  statusCode: z.number().int().optional().describe('what the endpoint answered, when it answered'),
  error: z.string().optional(),
  at: IsoDate,
});

const IdParams = z.strictObject({ id: ResourceId });

export const webhooksContract = defineGroup({
  group: 'webhooks',
  description: [
    "The account's own webhook endpoints: lifecycle events of its instance and agents (`instance.*`, `agent.*`, listed at",
    '`GET /api/instance/{userId}/events`) are POSTed to each, signed the Standard Webhooks way (`webhook-id` = the event id,',
    "`webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` with the endpoint's `whsec_` secret, shown once at registration).",
    "A failed delivery (no 2xx within 5 s) is retried with backoff through the events queue; every attempt is in the endpoint's delivery log.",
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
      responses: { ...commonErrorResponses, 200: z.object({ endpoints: z.array(WebhookEndpointRecord) }) },
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
      responses: {
        ...commonErrorResponses,
        201: z.object({ endpoint: WebhookEndpointRecord, secret: z.string().regex(/^whsec_/) }),
        400: z.union([ValidationErrorBody, ErrorBody]),
      },
    },
    {
      operation: 'deleteWebhookEndpoint',
      method: 'DELETE',
      path: '/api/webhooks/endpoints/{id}',
      auth: 'session',
      summary: 'Remove a webhook endpoint; nothing more is sent to it.',
      params: IdParams,
      responses: { ...commonErrorResponses, 200: SuccessTrue, 404: ErrorBody },
    },
    {
      operation: 'listWebhookDeliveries',
      method: 'GET',
      path: '/api/webhooks/endpoints/{id}/deliveries',
      auth: 'session',
      summary: 'The delivery log of one endpoint, newest first (kept 30 days).',
      params: IdParams,
      query: z.strictObject({
        limit: z.coerce.number().int().min(1).max(100).default(50),
        cursor: z.string().max(2048).optional().describe('the `cursor` of the previous page'),
      }),
      responses: { ...commonErrorResponses, 200: z.object({ deliveries: z.array(WebhookDeliveryRecord), cursor: z.string().nullable() }), 404: ErrorBody },
    },
  ],
});
