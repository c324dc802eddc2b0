import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';

/**
 * The built-in local model: an AI SDK language model that is no language model. The local stack
 * answers with it when no provider is set and no model server was found, so that chat, schedules,
 * budgets and the gateway run end to end with nothing configured. It answers deterministically from
 * the conversation, says what it is and how to connect a real model, streams its answer in pieces
 * and reports a token estimate. platform/config.ts refuses it in AWS.
 */

const QUOTE_CHARS = 240;
/** Words per streamed piece: small enough that every answer comes in several. */
const WORDS_PER_PIECE = 4;

const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** The text of a message's parts (files, tool calls and results have none). */
function textOf(content: LanguageModelV3Prompt[number]['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .trim();
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (!flat) return 'You sent an empty message.';
  const words = flat.split(' ').length;
  return flat.length <= QUOTE_CHARS ? `You wrote: “${flat}”.` : `You wrote ${words} words, beginning: “${flat.slice(0, QUOTE_CHARS).trimEnd()}…”.`;
}

/** The whole answer to a conversation: the same conversation always gets the same answer. */
export function builtinAnswer(prompt: LanguageModelV3Prompt): string {
  const fromUser = prompt.filter((m) => m.role === 'user');
  const last = fromUser.at(-1);
  return [
    'This is the built-in local model of the local stack: it is not a language model, and it answers without any provider key, the same way every time.',
    last ? quote(textOf(last.content)) : 'There is no message from you in this conversation yet.',
    `This conversation holds ${fromUser.length} message${fromUser.length === 1 ? '' : 's'} from you.`,
    'To connect a real model, run Ollama (127.0.0.1:11434) or a llama.cpp server (127.0.0.1:8080) on this machine, or set LOCAL_MODEL_URL to another OpenAI-compatible server,',
    'or give the platform a provider (MODEL_API_BASE_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_API_KEY), then start the stack again.',
  ].join(' ');
}

/** The answer in pieces, cut at the output ceiling the call was given. */
function pieces(options: LanguageModelV3CallOptions): { parts: string[]; cut: boolean } {
  const words = builtinAnswer(options.prompt).split(' ');
  const parts: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_PIECE) parts.push((i ? ' ' : '') + words.slice(i, i + WORDS_PER_PIECE).join(' '));
  const ceiling = options.maxOutputTokens;
  if (ceiling === undefined) return { parts, cut: false };
  const kept: string[] = [];
  let used = 0;
  for (const part of parts) {
    used += tokensOf(part);
    if (used > ceiling) return { parts: kept, cut: true };
    kept.push(part);
  }
  return { parts: kept, cut: false };
}

function usageOf(options: LanguageModelV3CallOptions, text: string): LanguageModelV3Usage {
  const input = options.prompt.reduce((sum, m) => sum + 4 + tokensOf(textOf(m.content)), 0);
  const output = tokensOf(text);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

const finishOf = (cut: boolean) => ({ unified: cut ? ('length' as const) : ('stop' as const), raw: undefined });

export function builtinModel(modelId: string): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'builtin',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const { parts, cut } = pieces(options);
      const text = parts.join('');
      return {
        content: [{ type: 'text', text }],
        finishReason: finishOf(cut),
        usage: usageOf(options, text),
        response: { modelId },
        warnings: [],
      };
    },
    async doStream(options) {
      const { parts, cut } = pieces(options);
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'response-metadata', modelId });
          controller.enqueue({ type: 'text-start', id: 'answer' });
          for (const delta of parts) controller.enqueue({ type: 'text-delta', id: 'answer', delta });
          controller.enqueue({ type: 'text-end', id: 'answer' });
          controller.enqueue({ type: 'finish', finishReason: finishOf(cut), usage: usageOf(options, parts.join('')) });
          controller.close();
        },
      });
      return { stream };
    },
  };
}
