import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, ResourceId } from './common';
import { defineGroup, lazySchema } from './route';

/**
 * The runtime's model call, apart from the instance group: it is the only runtime route that calls a
 * model, and carrying the AI SDK and its providers made every lifecycle route's function much
 * heavier.
 */

/** A chat message between a runtime and the model layer. */
export const RuntimeChatMessage = lazySchema(() =>
  z.strictObject({
    role: z.enum(['system', 'user', 'assistant']),
    content: z.string().check(z.maxLength(100_000)),
  }),
);

export const runtimeAuth = [
  "Called by the account's agent runtime, not by users: `Authorization: Bearer <gateway token>` (the token of `GET /api/instance/{userId}/token`);",
  'any other credential answers 401 `TOKEN_INVALID`. The runtime never holds provider keys or platform secrets.',
].join(' ');

const RuntimeCompletionBody = lazySchema(() =>
  z.strictObject({
    agentId: ResourceId(),
    messages: z.array(RuntimeChatMessage()).check(z.minLength(1), z.maxLength(200)),
    stream: z
      .optional(z.boolean())
      .check(
        z.describe(
          'true: answer `text/event-stream`: `delta` {content} per text piece, then `done` {id, model, fallbackFrom?, finish_reason, usage}, or `error` {error, code}',
        ),
      ),
  }),
);

const Int = lazySchema(() => z.number().check(z.int()));

/** OpenAI chat completion shape, so any OpenAI-compatible client library can be the runtime's. */
export const RuntimeCompletion = lazySchema(() =>
  z.object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: Int(),
    model: z.string().check(z.describe('the model that answered')),
    fallbackFrom: z
      .optional(z.string())
      .check(z.describe('set when a fallback answered: the model asked for, which failed before its first token; `model` is the one that answered')),
    choices: z.array(
      z.object({
        index: Int(),
        message: z.object({ role: z.literal('assistant'), content: z.string() }),
        finish_reason: z.nullable(z.string()),
      }),
    ),
    usage: z.object({ prompt_tokens: Int(), completion_tokens: Int(), total_tokens: Int() }),
  }),
);

export const runtimeModelContract = defineGroup({
  group: 'runtime-model',
  description: "The agent runtime's model calls through the platform's model layer (spec 2.16).",
  dynamoOnly: false,
  routes: [
    {
      operation: 'runtimeChatCompletion',
      method: 'POST',
      path: '/api/instance/{userId}/runtime/chat/completions',
      auth: 'runtime',
      summary:
        "Runtime: the platform's model layer for an agent, OpenAI chat completions format; the platform picks the agent's model and holds the provider key.",
      description: [
        runtimeAuth,
        "The model is the agent's (`config.model`, else its provisioned model) and must be allowed by the account's plan (403 `MODEL_RESTRICTED`);",
        'a plan and an active subscription are required unless the owner is an admin (402 `PLAN_REQUIRED` / `SUBSCRIPTION_REQUIRED`), and the call is',
        'metered and charged like every model call (402 `INSUFFICIENT_CREDITS`, see `POST /api/ai/chat`). 503 `MODEL_NOT_CONFIGURED` while no',
        'provider serves the model; 502 `MODEL_PROVIDER_ERROR` when the provider fails or times out.',
      ].join(' '),
      params: () => z.strictObject({ userId: ResourceId() }),
      body: RuntimeCompletionBody,
      example: {
        agentId: 'agt_7f3k2m9q',
        messages: [
          { role: 'system', content: 'You are the booking assistant of a touring DJ.' },
          { role: 'user', content: 'Which dates are still open in June?' },
        ],
      },
      responses: () => ({
        ...commonErrorResponses(),
        200: RuntimeCompletion(),
        402: ErrorBody(),
        403: ErrorBody(),
        404: ErrorBody(),
        502: ErrorBody(),
        503: ErrorBody(),
      }),
    },
  ],
});
