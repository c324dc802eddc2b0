import type { Log } from './log';
import { PlatformError, type AgentState, type ChatMessage, type PlatformClient, type TokenUsage } from './platform';

/**
 * One chat exchange through the platform's model layer: the agent's system prompt (its skills and
 * memory folded in), its history or the given thread, the user's message; the answer whole or
 * streamed. Every exchange is stored on the platform before it is answered, so a restart loses nothing.
 */

/** The longest user message (and thread message) the runtime takes. */
export const MAX_MESSAGE_CHARS = 32_000;
const MAX_MEMORY_CHARS = 16_000;

export type ChatResult = { ok: true; content: string; usage?: TokenUsage } | { ok: false; code: string; error: string };

function systemPrompt(agent: AgentState): string {
  const base = agent.config.systemPrompt?.trim() || `You are ${agent.name}, an AI agent hosted on the agent platform. Answer helpfully and concisely.`;
  const skills = (agent.skills ?? []).filter((s) => s.enabled).map((s) => s.skillId);
  const withSkills = skills.length ? `${base}\n\nSkills installed on you: ${skills.join(', ')}.` : base;
  const entries = Object.entries(agent.memory);
  if (!entries.length) return withSkills;
  const memory = entries
    .map(([k, v]) => `- ${k}: ${JSON.stringify(v)}`)
    .join('\n')
    .slice(0, MAX_MEMORY_CHARS);
  return `${withSkills}\n\nWhat you remember (key: value):\n${memory}`;
}

/** A streamed completion read to its end, in the shape of `complete`'s answer; an `error` event fails it. */
async function streamedCompletion(platform: PlatformClient, agentId: string, messages: ChatMessage[], onDelta: (text: string) => void) {
  let content = '';
  for await (const e of platform.completeStream(agentId, messages)) {
    if (e.event === 'delta') {
      content += e.data.content;
      onDelta(e.data.content);
    } else if (e.event === 'error') throw new PlatformError(e.data.error, 502, e.data.code);
    else return { choices: [{ message: { content } }], usage: e.data.usage };
  }
  throw new PlatformError('the completion stream ended without its last event', 502, 'STREAM_BROKEN');
}

export function chatExchange({ platform, historyLimit, log }: { platform: PlatformClient; historyLimit: number; log: Log }) {
  return async function answer(
    agent: AgentState,
    content: string,
    /** A conversation thread's own messages (a chat session); without it, the agent's whole history. */
    thread?: ChatMessage[],
    /** Given: the completion is streamed and each text piece handed here as it arrives. */
    onDelta?: (text: string) => void,
  ): Promise<ChatResult> {
    const history: ChatMessage[] = thread ?? agent.messages.map(({ role, content: c }) => ({ role, content: c }));
    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt(agent) }, ...history, { role: 'user', content }];
    const started = performance.now();
    try {
      const out = onDelta ? await streamedCompletion(platform, agent.id, messages, onDelta) : await platform.complete(agent.id, messages);
      const reply = out.choices[0]?.message.content ?? '';
      const exchange: ChatMessage[] = [
        { role: 'user', content },
        { role: 'assistant', content: reply },
      ];
      await platform
        .report(agent.id, exchange, { responseMs: Math.round(performance.now() - started) })
        .catch((err) => log('could not store an exchange', { level: 'WARN', agentId: agent.id, error: String(err).slice(0, 200) }));
      // A thread's exchange belongs to that thread: the agent-wide context stays as it was.
      if (!thread) agent.messages = [...agent.messages, ...exchange].slice(-historyLimit);
      log('chat handled', { agentId: agent.id, ms: Math.round(performance.now() - started), thread: !!thread, tokens: out.usage?.total_tokens });
      return { ok: true as const, content: reply, usage: out.usage };
    } catch (err) {
      const e = err instanceof PlatformError ? err : new PlatformError('the agent failed to answer', 500, 'RUNTIME_ERROR');
      log('chat failed', { level: 'ERROR', agentId: agent.id, code: e.code, error: e.message.slice(0, 200) });
      await platform.report(agent.id, [{ role: 'user', content }], { failed: true }).catch(() => undefined);
      agent.messages = [...agent.messages, { role: 'user' as const, content }].slice(-historyLimit);
      return { ok: false as const, code: e.code, error: e.message };
    }
  };
}

export type Answer = ReturnType<typeof chatExchange>;
