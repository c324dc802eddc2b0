import * as z from 'zod';
import { config } from '../config';

/**
 * The platform's model layer: an OpenAI-compatible chat completions client
 * (`POST {MODEL_API_BASE_URL}/chat/completions` with `Authorization: Bearer {MODEL_API_KEY}`), which
 * fits OpenAI itself, aggregators such as OpenRouter (whose model ids are `<vendor>/<model>`, as
 * the platform's) and local servers. Agent runtimes reach it only through the platform, so the
 * provider key never leaves it.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  top_p?: number;
}

const CompletionResponse = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        index: z.number().optional(),
        message: z.object({ role: z.string().optional(), content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional(), total_tokens: z.number().optional() })
    .optional(),
});

export interface ChatCompletion {
  id: string;
  model: string;
  content: string;
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/** No provider is configured (MODEL_API_BASE_URL unset): a setup problem, said plainly. */
export class ModelNotConfiguredError extends Error {
  constructor() {
    super('no model provider is configured: the operator must set MODEL_API_BASE_URL (and MODEL_API_KEY)');
  }
}

/** The provider failed or answered something that is not a chat completion. */
export class ModelProviderError extends Error {
  constructor(
    message: string,
    readonly providerStatus?: number,
  ) {
    super(message);
  }
}

export const modelConfigured = () => config().model.baseUrl !== undefined;

export async function chatCompletion(request: ChatRequest): Promise<ChatCompletion> {
  const { baseUrl, apiKey, timeoutMs } = config().model;
  if (!baseUrl) throw new ModelNotConfiguredError();
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ ...request, stream: false }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new ModelProviderError(`model provider unreachable: ${(err as Error).name}`);
  }
  const text = await res.text();
  if (!res.ok) throw new ModelProviderError(`model provider answered ${res.status}`, res.status);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ModelProviderError('model provider answered with something that is not JSON', res.status);
  }
  const parsed = CompletionResponse.safeParse(json);
  if (!parsed.success) throw new ModelProviderError('model provider answered with something that is not a chat completion', res.status);
  const choice = parsed.data.choices[0]!;
  const usage = parsed.data.usage ?? {};
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  return {
    id: parsed.data.id ?? `chatcmpl-${Date.now()}`,
    model: parsed.data.model ?? request.model,
    content: choice.message.content ?? '',
    finishReason: choice.finish_reason ?? null,
    usage: { promptTokens, completionTokens, totalTokens: usage.total_tokens ?? promptTokens + completionTokens },
  };
}
