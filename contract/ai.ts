import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ValidationErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

/** `<vendor>/<model>`, e.g. `openai/gpt-4o-mini`. */
export const ModelId = lazySchema(() =>
  z.string().check(z.maxLength(128), z.regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'must be <vendor>/<model>')),
);

export const ProviderName = lazySchema(() =>
  z.string().check(z.minLength(1), z.maxLength(64), z.regex(/^[a-z0-9-]+$/, 'must be lowercase letters, digits or -')),
);

/** The AI model record of spec 2.14. */
export const AiModelRecord = lazySchema(() =>
  z.object({
    id: ModelId(),
    name: z.string(),
    provider: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    inputCost: z.number().check(z.nonnegative(), z.describe('USD per million input (prompt) tokens')),
    outputCost: z.number().check(z.nonnegative(), z.describe('USD per million output (completion) tokens')),
    contextWindow: z.number().check(z.int(), z.positive()),
    available: z.boolean().check(z.describe('a configured provider can serve it (a direct vendor API or the OpenAI-compatible aggregator)')),
  }),
);

export const CHAT_ROLES = ['user', 'assistant', 'system'] as const;
export const TaskType = lazySchema(() =>
  z.string().check(z.minLength(1), z.maxLength(64), z.regex(/^[a-z0-9_-]+$/, 'must be lowercase letters, digits, _ or -')),
);
export const DEFAULT_TASK_TYPE = 'general';

export const ChatRequestBody = lazySchema(() =>
  z.strictObject({
    messages: z.array(z.strictObject({ role: z.enum(CHAT_ROLES), content: z.string().check(z.maxLength(100_000)) })).check(z.minLength(1), z.maxLength(500)),
    model: z.optional(ModelId()).check(z.describe('auto-selected from taskType when omitted; must be allowed by the plan')),
    taskType: z.optional(TaskType()),
    temperature: z.optional(z.number().check(z.minimum(0), z.maximum(2))),
    top_p: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
    max_tokens: z.optional(z.number().check(z.int(), z.positive(), z.maximum(1_000_000))),
  }),
);

export const CHAT_PAYMENT_CODES = ['PLAN_REQUIRED', 'SUBSCRIPTION_REQUIRED'] as const;

export const ChatPaymentRequiredBody = lazySchema(() =>
  z.object({
    success: z.literal(false),
    error: z.string(),
    code: z.enum(CHAT_PAYMENT_CODES),
  }),
);

export const ModelRestrictedBody = lazySchema(() =>
  z.object({
    success: z.literal(false),
    error: z.string(),
    code: z.literal('MODEL_RESTRICTED'),
    allowedModels: z.array(ModelId()),
  }),
);

const TokenCount = lazySchema(() => z.number().check(z.int(), z.nonnegative(), z.maximum(1_000_000_000)));

const BadRequest = lazySchema(() => z.union([ValidationErrorBody(), ErrorBody()]));

export const aiContract = defineGroup({
  group: 'ai',
  description: 'Unified AI model layer: provider health, model listing and selection, plan-gated chat, cost estimates (spec 4.11).',
  dynamoOnly: false,
  streams: true,
  routes: [
    {
      operation: 'getAiHealth',
      method: 'GET',
      path: '/api/ai/health',
      auth: 'none',
      summary: 'Whether each configured provider is reachable: healthy when all are, degraded when some are; 503 when none.',
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          status: z.enum(['healthy', 'degraded']),
          providers: z.record(ProviderName(), z.boolean()),
          timestamp: IsoDate(),
        }),
        503: z.object({ status: z.literal('error'), error: z.string(), code: z.literal('AI_NOT_CONFIGURED') }).check(z.describe('no provider is configured')),
      }),
    },
    {
      operation: 'listAiModels',
      method: 'GET',
      path: '/api/ai/models',
      auth: 'none',
      summary: 'Every model of every provider, with the total count and one count per provider (keyed by provider name).',
      responses: () => ({
        200: z
          .catchall(
            z.object({ models: z.array(AiModelRecord()), count: z.number().check(z.int(), z.nonnegative()), timestamp: IsoDate() }),
            z.number().check(z.int(), z.nonnegative()),
          )
          .check(z.describe('besides `models`, `count` and `timestamp`, each provider name maps to its model count')),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'listAiProviderModels',
      method: 'GET',
      path: '/api/ai/models/{provider}',
      auth: 'none',
      summary: "One provider's models.",
      params: () => z.strictObject({ provider: ProviderName() }),
      responses: () => ({
        200: z.object({ provider: z.string(), models: z.array(AiModelRecord()), count: z.number().check(z.int(), z.nonnegative()), timestamp: IsoDate() }),
        404: ErrorBody().check(z.describe('no such provider')),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'selectAiModel',
      method: 'POST',
      path: '/api/ai/models/select',
      auth: 'optional',
      summary: 'The model the platform would pick for a task type (default `general`).',
      description:
        'Policy: the cheapest available model (input + output price) carrying the tag of the task type: `general`, `fast`, `code` (alias `coding`), ' +
        "`reasoning`, `long-context`; any other task type is taken as a tag. With a session, only models of the caller's plan count. 404 when none fits.",
      body: () => z.strictObject({ taskType: z._default(TaskType(), DEFAULT_TASK_TYPE) }),
      example: { taskType: 'coding' },
      responses: () => ({
        200: z.object({ model: z.object({ id: ModelId(), provider: z.string() }), taskType: z.string(), timestamp: IsoDate() }),
        404: ErrorBody().check(z.describe('no models available')),
        ...commonErrorResponses(),
      }),
    },
    {
      operation: 'aiChat',
      method: 'POST',
      path: '/api/ai/chat',
      auth: 'session',
      summary: "Chat completion through the model layer, limited to the models of the caller's plan.",
      description:
        "Identity, plan and subscription come from the stored account of the authenticated caller. The `x-user-plan`, `x-user-email` and `x-card-subscription-id` headers of the spec are checked against that account and never grant anything: a plan or email that does not match, or a subscription id that is not the account's active one, is refused. No plan on the account answers 402 `PLAN_REQUIRED`, no active subscription 402 `SUBSCRIPTION_REQUIRED`; a model outside the plan answers 403 `MODEL_RESTRICTED` with `allowedModels`. Admin accounts (the configured admin list) get `network`-level model access whatever their plan.\n\n" +
        'A contradicting header answers 403 `HEADER_MISMATCH`. Without `model`, the model is auto-selected from `taskType` (see `POST /api/ai/models/select`). ' +
        '`temperature` and `top_p` are clamped to what the model accepts and `max_tokens` to its output limit; a prompt over the context window answers 400 `CONTEXT_WINDOW_EXCEEDED`. ' +
        "A provider failure answers 500 `PROVIDER_ERROR`, a provider that does not answer within MODEL_API_TIMEOUT_MS (or 1 s before the request's deadline, REQUEST_DEADLINE_MS) 500 `PROVIDER_TIMEOUT`.\n\n" +
        'Spending: each plan includes model spend per billing period (`includedCredits` of the catalogue); past it, each call is debited from the credit ' +
        'balance at catalogue price (1 credit = `creditUsd`, rounded up per call). BYOK calls and admin calls cost no credits. With both used up: 402 `INSUFFICIENT_CREDITS`; at a monthly spending cap (`PUT /api/budget`): 402 `BUDGET_EXCEEDED`.\n\n' +
        'Streaming: with `Accept: text/event-stream` the answer is server-sent events: `start` `{id, model, provider}`, then `delta` `{content}` per text piece, ' +
        'then `done` `{id, model, provider, finishReason, usage, timestamp}` (or `error` `{error, code}` when the provider fails mid-stream). ' +
        'The local stack streams them as they come; API Gateway HTTP APIs buffer responses, so in AWS the same events arrive in one body (see the README).',
      body: ChatRequestBody,
      example: {
        messages: [
          { role: 'system', content: 'You are a concise tour-booking assistant.' },
          { role: 'user', content: 'Draft a two-line announcement for our Manchester show on 12 September.' },
        ],
        taskType: 'general',
        temperature: 0.7,
        max_tokens: 256,
      },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          id: z.string(),
          model: ModelId(),
          provider: z.string(),
          fallbackFrom: z.optional(ModelId()).check(z.describe('set when a fallback answered: the model asked for, which failed before its first token')),
          message: z.object({ role: z.literal('assistant'), content: z.string() }),
          usage: z.object({ promptTokens: TokenCount(), completionTokens: TokenCount(), totalTokens: TokenCount() }),
          timestamp: IsoDate(),
        }),
        400: z.union([ValidationErrorBody(), ErrorBody()]).check(z.describe('invalid body, or a prompt over the context window (`CONTEXT_WINDOW_EXCEEDED`)')),
        402: z.union([
          ChatPaymentRequiredBody(),
          z.object({ success: z.literal(false), error: z.string(), code: z.enum(['INSUFFICIENT_CREDITS', 'BUDGET_EXCEEDED']) }),
        ]),
        403: z.union([ModelRestrictedBody(), ErrorBody()]).check(z.describe('MODEL_RESTRICTED, or a refused header or CSRF token')),
        404: ErrorBody().check(z.describe('no models available')),
        500: ErrorBody().check(z.describe('provider error')),
      }),
    },
    {
      operation: 'estimateAiCost',
      method: 'POST',
      path: '/api/ai/estimate-cost',
      auth: 'none',
      summary: "Estimated cost of a call from the model's catalogue prices (USD per million tokens), in USD.",
      body: () => z.strictObject({ model: ModelId(), inputTokens: TokenCount(), outputTokens: TokenCount() }),
      example: { model: 'openai/gpt-4o-mini', inputTokens: 1200, outputTokens: 400 },
      responses: () => ({
        ...commonErrorResponses(),
        200: z.object({
          model: ModelId(),
          inputTokens: TokenCount(),
          outputTokens: TokenCount(),
          estimatedCost: z.number().check(z.nonnegative()),
          currency: z.string(),
          timestamp: IsoDate(),
        }),
        400: BadRequest().check(z.describe('a missing or invalid field')),
        404: ErrorBody().check(z.describe('no such model in the catalogue')),
      }),
    },
  ],
});
