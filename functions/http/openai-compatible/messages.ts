import type { ModelMessage } from 'ai';
import type * as z from 'zod/mini';
import type { OpenAiMessage } from '#contract/openai-compatible';
import { invalid } from '#platform/errors';

/** OpenAI's chat messages as the model layer's (the AI SDK's) messages, and as the turns an agent takes. */

export type OpenAiChatMessage = z.infer<ReturnType<typeof OpenAiMessage>>;

type Content = Extract<OpenAiChatMessage, { role: 'user' }>['content'] | null | undefined;

export const textOf = (content: Content): string => (typeof content === 'string' ? content : (content ?? []).map((p) => p.text).join(''));

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('tool_calls[].function.arguments must be JSON', 'INVALID_TOOL_ARGUMENTS', { param: 'messages' });
  }
}

/** A tool message names only its call's id; the SDK also wants the tool's name, from the assistant message that made the call. */
export function modelMessagesOf(messages: OpenAiChatMessage[]): ModelMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((m): ModelMessage => {
    if (m.role === 'system' || m.role === 'developer') return { role: 'system', content: textOf(m.content) };
    if (m.role === 'user') return { role: 'user', content: textOf(m.content) };
    if (m.role === 'assistant') {
      const text = textOf(m.content);
      if (!m.tool_calls?.length) return { role: 'assistant', content: text };
      for (const call of m.tool_calls) toolNames.set(call.id, call.function.name);
      return {
        role: 'assistant',
        content: [
          ...(text ? [{ type: 'text' as const, text }] : []),
          ...m.tool_calls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.function.name,
            input: parsedArguments(call.function.arguments),
          })),
        ],
      };
    }
    const toolName = toolNames.get(m.tool_call_id);
    if (!toolName) throw invalid(`no assistant tool call has the id ${m.tool_call_id}`, 'UNKNOWN_TOOL_CALL', { param: 'messages' });
    return {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName, output: { type: 'text', value: textOf(m.content) } }],
    };
  });
}

type Turn = { role: 'user' | 'assistant'; content: string };

/**
 * What an agent is sent: the last message, which must be the user's, and the earlier user and
 * assistant turns as the conversation's context when the client keeps one (none: the agent's own
 * history). System messages are not sent: the agent has its own instructions.
 */
export function agentTurnsOf(messages: OpenAiChatMessage[]): { message: string; thread?: Turn[] } {
  const turns: Turn[] = messages.flatMap((m): Turn[] => (m.role === 'user' || m.role === 'assistant' ? [{ role: m.role, content: textOf(m.content) }] : []));
  const last = turns.at(-1);
  if (messages.at(-1)?.role !== 'user' || !last?.content.trim()) {
    throw invalid("an agent answers a conversation that ends with the user's message", 'LAST_MESSAGE_NOT_USER', { param: 'messages' });
  }
  const earlier = turns.slice(0, -1).filter((t) => t.content);
  return { message: last.content, ...(earlier.length ? { thread: earlier } : {}) };
}
