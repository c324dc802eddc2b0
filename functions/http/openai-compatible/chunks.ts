import { RawBody, type SseEvent } from '#http/reply';

/**
 * OpenAI's streamed chat completion, frame by frame: a first chunk with the assistant role, one
 * chunk per text piece, the tool calls (each whole, by index), a last chunk with the finish reason,
 * with `include_usage` one more with the usage and no choices, then `data: [DONE]`. A failure after
 * the first frame is an `{error}` frame, which the OpenAI SDKs raise as an APIError. The frames have
 * no event name: OpenAI's parsers read the data lines.
 */

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface CompletionToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What the answer is made of, in order: text pieces, then its end. A failure is thrown. */
export type CompletionPart =
  | { type: 'text'; text: string }
  | { type: 'end'; finishReason: FinishReason; usage: CompletionUsage; toolCalls?: CompletionToolCall[] };

export interface CompletionHead {
  id: string;
  model: string;
  /** Epoch seconds. */
  created: number;
  includeUsage: boolean;
}

/** The AI SDK's finish reasons (`tool-calls`, `content-filter`, `error`, `other`) as OpenAI names them. */
export function openAiFinishReason(reason: string): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool-calls' || reason === 'tool_calls') return 'tool_calls';
  if (reason === 'content-filter' || reason === 'content_filter') return 'content_filter';
  return 'stop';
}

/** A failure as OpenAI's error object, inside a stream whose status is already sent. */
export function streamErrorFrame(err: unknown): SseEvent {
  const code = (err as { code?: unknown }).code;
  return {
    data: {
      error: {
        message: 'the model failed while streaming',
        type: 'server_error',
        code: typeof code === 'string' ? code.toLowerCase() : 'provider_error',
        param: null,
      },
    },
  };
}

export const DONE_FRAME: SseEvent = { data: new RawBody('[DONE]') };

export async function* chatCompletionChunks(head: CompletionHead, parts: AsyncIterable<CompletionPart>): AsyncGenerator<SseEvent> {
  const chunk = (choices: unknown[], usage?: CompletionUsage | null): SseEvent => ({
    data: {
      id: head.id,
      object: 'chat.completion.chunk',
      created: head.created,
      model: head.model,
      choices,
      ...(head.includeUsage ? { usage: usage ?? null } : {}),
    },
  });
  const choice = (delta: Record<string, unknown>, finishReason: FinishReason | null = null) => ({
    index: 0,
    delta,
    finish_reason: finishReason,
    logprobs: null,
  });
  yield chunk([choice({ role: 'assistant', content: '' })]);
  try {
    for await (const part of parts) {
      if (part.type === 'text') {
        if (part.text) yield chunk([choice({ content: part.text })]);
        continue;
      }
      if (part.toolCalls?.length) yield chunk([choice({ tool_calls: part.toolCalls.map((call, index) => ({ index, ...call })) })]);
      yield chunk([choice({}, part.finishReason)]);
      if (head.includeUsage) yield chunk([], part.usage);
      yield DONE_FRAME;
      return;
    }
  } catch (err) {
    yield streamErrorFrame(err);
    return;
  }
  yield streamErrorFrame({ code: 'PROVIDER_ERROR' });
}
