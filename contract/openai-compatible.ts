import * as z from 'zod/mini';
import { defineGroup, lazySchema } from './route';

/**
 * The OpenAI-compatible API: OpenAI's own clients (the `openai` SDKs, and every tool built on them)
 * reach the platform's model layer and the caller's hosted agents by changing only their base URL
 * to `<platform>/v1` and using an `sk_` API key. Bodies and errors are OpenAI's wire format.
 */

/** A model id as `/v1/models` lists it: a catalogue model (`openai/gpt-4o-mini`) or one of the caller's agents. */
export const AGENT_MODEL_PREFIX = 'agent/';

/** `agent/<agentId>`: the caller's hosted agent answers, with its memory, skills and history. */
export const agentIdOfModel = (model: string): string | undefined =>
  model.startsWith(AGENT_MODEL_PREFIX) ? model.slice(AGENT_MODEL_PREFIX.length) : undefined;

const Int = lazySchema(() => z.number().check(z.int(), z.nonnegative()));

/** `{error: {message, type, code, param}}`, with the platform's details (`allowedModels`, `retryAfter`, `issues`) beside them. */
export const OpenAiErrorBody = lazySchema(() =>
  z.object({
    error: z.looseObject({
      message: z.string(),
      type: z
        .string()
        .check(
          z.describe('invalid_request_error, authentication_error, insufficient_quota, permission_error, not_found_error, rate_limit_error or server_error'),
        ),
      code: z.nullable(z.string()).check(z.describe("the platform's error code in lower case (`model_restricted`, `budget_exceeded`, `rate_limited`)")),
      param: z.nullable(z.string()).check(z.describe('the request field at fault, when there is one (`model`, `messages.0.role`)')),
    }),
  }),
);

/** Every failure status of a route, the pipeline's own (413, 415, 504) included, in OpenAI's shape. */
const errorResponses = (statuses: readonly number[]) => Object.fromEntries(statuses.map((s) => [s, OpenAiErrorBody()]));

const TextPart = lazySchema(() => z.strictObject({ type: z.literal('text'), text: z.string().check(z.maxLength(100_000)) }));
/** A message's text: a string, or OpenAI's content parts of type `text` (images and audio are not taken). */
const Content = lazySchema(() => z.union([z.string().check(z.maxLength(100_000)), z.array(TextPart()).check(z.maxLength(100))]));

const ToolCall = lazySchema(() =>
  z.strictObject({
    id: z.string().check(z.minLength(1), z.maxLength(256)),
    type: z.literal('function'),
    function: z.strictObject({ name: z.string().check(z.minLength(1), z.maxLength(64)), arguments: z.string().check(z.maxLength(100_000)) }),
  }),
);

const Name = lazySchema(() => z.optional(z.string().check(z.maxLength(64))));

export const OpenAiMessage = lazySchema(() =>
  z.discriminatedUnion('role', [
    z.strictObject({ role: z.literal('system'), content: Content(), name: Name() }),
    z.strictObject({ role: z.literal('developer'), content: Content(), name: Name() }),
    z.strictObject({ role: z.literal('user'), content: Content(), name: Name() }),
    z.strictObject({
      role: z.literal('assistant'),
      content: z.optional(z.nullable(Content())),
      name: Name(),
      refusal: z.optional(z.nullable(z.string())),
      tool_calls: z.optional(z.array(ToolCall()).check(z.maxLength(128))),
    }),
    z.strictObject({ role: z.literal('tool'), content: Content(), tool_call_id: z.string().check(z.minLength(1), z.maxLength(256)) }),
  ]),
);

const FunctionTool = lazySchema(() =>
  z.strictObject({
    type: z.literal('function'),
    function: z.strictObject({
      name: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64')),
      description: z.optional(z.string().check(z.maxLength(4_000))),
      parameters: z.optional(z.record(z.string(), z.unknown())).check(z.describe('a JSON Schema object')),
      strict: z.optional(z.nullable(z.boolean())),
    }),
  }),
);

const ToolChoice = lazySchema(() =>
  z.union([
    z.enum(['none', 'auto', 'required']),
    z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: z.string().check(z.maxLength(64)) }) }),
  ]),
);

const MaxTokens = lazySchema(() => z.optional(z.number().check(z.int(), z.positive(), z.maximum(1_000_000))));

export const ChatCompletionRequest = lazySchema(() =>
  z.strictObject({
    model: z
      .string()
      .check(z.minLength(1), z.maxLength(128), z.describe("a catalogue model the caller's plan allows (`openai/gpt-4o-mini`), or `agent/<agentId>`")),
    messages: z.array(OpenAiMessage()).check(z.minLength(1), z.maxLength(500)),
    stream: z.optional(z.nullable(z.boolean())),
    stream_options: z.optional(z.nullable(z.strictObject({ include_usage: z.optional(z.boolean()) }))),
    temperature: z.optional(z.nullable(z.number().check(z.minimum(0), z.maximum(2)))),
    top_p: z.optional(z.nullable(z.number().check(z.minimum(0), z.maximum(1)))),
    max_tokens: z.optional(z.nullable(MaxTokens())),
    max_completion_tokens: z.optional(z.nullable(MaxTokens())).check(z.describe('the newer name of max_tokens; wins when both are given')),
    stop: z.optional(z.nullable(z.union([z.string().check(z.maxLength(256)), z.array(z.string().check(z.maxLength(256))).check(z.maxLength(4))]))),
    tools: z.optional(z.array(FunctionTool()).check(z.maxLength(128))),
    tool_choice: z.optional(ToolChoice()),
    parallel_tool_calls: z.optional(z.boolean()),
    n: z.optional(z.nullable(z.literal(1))).check(z.describe('one choice only')),
    user: z.optional(z.string().check(z.maxLength(256))),
  }),
);

const Usage = lazySchema(() => z.object({ prompt_tokens: Int(), completion_tokens: Int(), total_tokens: Int() }));

const AnswerToolCall = lazySchema(() =>
  z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) }),
);

export const ChatCompletion = lazySchema(() =>
  z.object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: Int(),
    model: z.string().check(z.describe('the model that answered: a fallback of the one asked for when it failed before its first token')),
    fallbackFrom: z
      .optional(z.string())
      .check(z.describe('set when a fallback answered: the model asked for, which failed before its first token; `model` is the one that answered')),
    choices: z.array(
      z.object({
        index: Int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.nullable(z.string()),
          refusal: z.null(),
          tool_calls: z.optional(z.array(AnswerToolCall())),
        }),
        finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']),
        logprobs: z.null(),
      }),
    ),
    usage: Usage(),
  }),
);

/** One frame of a streamed answer (`data: <chunk>`), the last one `data: [DONE]`. */
export const ChatCompletionChunk = lazySchema(() =>
  z.object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: Int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: Int(),
        delta: z.object({
          role: z.optional(z.literal('assistant')),
          content: z.optional(z.nullable(z.string())),
          tool_calls: z.optional(
            z.array(
              z.object({
                index: Int(),
                id: z.optional(z.string()),
                type: z.optional(z.literal('function')),
                function: z.object({ name: z.optional(z.string()), arguments: z.optional(z.string()) }),
              }),
            ),
          ),
        }),
        finish_reason: z.nullable(z.enum(['stop', 'length', 'tool_calls', 'content_filter'])),
        logprobs: z.null(),
      }),
    ),
    usage: z.optional(z.nullable(Usage())).check(z.describe('with `stream_options.include_usage`: null on every chunk but the last, which has no choices')),
  }),
);

export const OpenAiModel = lazySchema(() =>
  z.object({
    id: z.string(),
    object: z.literal('model'),
    created: Int(),
    owned_by: z.string().check(z.describe('the vendor of a catalogue model; `agent` for one of your agents')),
    name: z.optional(z.string()),
  }),
);

export const openAiCompatibleContract = defineGroup({
  group: 'openai-compatible',
  description:
    "OpenAI-compatible API: the OpenAI SDKs, with `baseURL` at `<platform>/v1` and an `sk_` API key, list the models of the caller's plan and the caller's agents, and get chat completions from the model layer (plan-gated, metered, under the budgets) or from a hosted agent.",
  dynamoOnly: false,
  // `POST /v1/chat/completions` with `stream: true` answers `chat.completion.chunk` frames (its Function URL twin streams them).
  streams: true,
  errorShape: 'openai',
  routes: [
    {
      operation: 'listOpenAiModels',
      method: 'GET',
      path: '/v1/models',
      auth: 'session',
      rateLimit: 'modelApi',
      summary:
        "The models the caller's plan allows and a configured provider serves, and each of the caller's agents as `agent/<agentId>`, in OpenAI's list shape.",
      description:
        'Without a paid plan the list holds only the agents. Errors are OpenAI-shaped: `{error: {message, type, code, param}}` (401 without a valid credential, 429 with `Retry-After`).',
      responses: () => ({
        200: z.object({ object: z.literal('list'), data: z.array(OpenAiModel()) }),
        ...errorResponses([401, 403, 429, 500, 503, 504]),
      }),
    },
    {
      operation: 'createOpenAiChatCompletion',
      method: 'POST',
      path: '/v1/chat/completions',
      auth: 'session',
      rateLimit: 'modelApi',
      summary: "OpenAI chat completions, through the platform's model layer or, for model `agent/<agentId>`, answered by the caller's hosted agent.",
      description: [
        "A catalogue model goes through the same model layer as `POST /api/ai/chat`: the stored account's plan decides (402 `plan_required` / `subscription_required`; a model outside the plan 403 `model_restricted` with `allowedModels`),",
        'the call is metered and charged like every model call (402 `insufficient_credits`, or `budget_exceeded` at a monthly spending cap), `temperature` and `top_p` are clamped to what the model accepts and `max_tokens` / `max_completion_tokens` to its output limit;',
        '`stop` and function `tools` / `tool_choice` are passed to the provider (the client runs the tools: the answer carries `tool_calls` and `finish_reason: tool_calls`).',
        "Model `agent/<agentId>` sends the last user message to the caller's agent (404 when it is not the caller's), which answers with its own instructions, memory and skills and stores the exchange in its history as `POST /api/chat` does;",
        "the earlier user and assistant turns of `messages`, when there are any, are the conversation's context instead of the agent's history; system messages are the agent's own. An agent stopped for idleness wakes: past WAKE_WAIT_SECONDS the answer is 503 `agent_waking` with `Retry-After` (the SDKs retry it). 409 `agent_not_running` for an agent its owner stopped.",
        'With `stream: true` the answer is `text/event-stream`: `data: <chat.completion.chunk>` frames (the first carries `role`, then one per text piece, the last the `finish_reason`), with `stream_options.include_usage` one more chunk with `usage` and no choices, then `data: [DONE]`;',
        'a failure after the first frame is a frame `{error: {...}}`. The local stack streams the frames as they come; API Gateway HTTP APIs buffer responses, so in AWS they arrive in one body unless sent to the streaming Function URL (see the README).',
        'Errors are OpenAI-shaped: `{error: {message, type, code, param}}`.',
      ].join(' '),
      body: ChatCompletionRequest,
      example: {
        model: 'openai/gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are a concise tour-booking assistant.' },
          { role: 'user', content: 'Draft a two-line announcement for our Manchester show on 12 September.' },
        ],
        temperature: 0.7,
        max_tokens: 256,
      },
      responses: () => ({
        200: z.union([
          ChatCompletion(),
          z.string().check(z.describe('with `stream: true`: text/event-stream of `data: <chat.completion.chunk>` frames, then `data: [DONE]`')),
        ]),
        ...errorResponses([400, 401, 402, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504]),
      }),
    },
  ],
});
