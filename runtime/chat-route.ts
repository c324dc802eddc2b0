import type http from 'node:http';
import type { AgentCache } from './agents';
import { MAX_MESSAGE_CHARS, type Answer } from './chat';
import { json, readBody } from './http-io';
import type { AgentState, ChatMessage } from './platform';
import type { Enqueue } from './queue';

interface ChatRouteDeps {
  agents: AgentCache;
  answer: Answer;
  enqueue: Enqueue;
  historyLimit: number;
}

/**
 * POST /agents/<id>/chat {content, thread?, stream?}: the platform's `/api/chat` and `/api/agent`
 * chat, one exchange answered through the platform's model layer.
 */
export function chatRoute({ agents, answer, enqueue, historyLimit }: ChatRouteDeps) {
  /** A thread the platform sends with a message: plain user/assistant turns, within the history limit; null when malformed. */
  function threadOf(value: unknown): ChatMessage[] | null {
    if (!Array.isArray(value) || value.length > historyLimit) return null;
    const turns: ChatMessage[] = [];
    for (const m of value as { role?: unknown; content?: unknown }[]) {
      if ((m?.role !== 'user' && m?.role !== 'assistant') || typeof m.content !== 'string' || m.content.length > MAX_MESSAGE_CHARS) return null;
      turns.push({ role: m.role, content: m.content });
    }
    return turns;
  }

  /**
   * `stream: true`: server-sent events relayed from the platform's streamed completion. The status
   * waits for the first text piece, so a refusal before it (a spending cap, no model) is still a
   * JSON error as without `stream`; after it, a failure ends the stream with an `error` event.
   */
  async function streamChat(res: http.ServerResponse, agent: AgentState, content: string, thread: ChatMessage[] | undefined) {
    const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    const result = await enqueue(agent.id, () =>
      answer(agent, content, thread, (text) => {
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
        event('delta', { content: text });
      }),
    );
    if (!res.headersSent) {
      if (result.ok) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      else return json(res, 502, { error: result.error, code: result.code });
    }
    if (result.ok) event('done', { content: result.content, usage: result.usage });
    else event('error', { error: result.error, code: result.code });
    res.end();
  }

  return async function chatOverHttp(req: http.IncomingMessage, res: http.ServerResponse, agentId: string) {
    const body = await readBody(req);
    let content: unknown;
    let thread: unknown;
    let stream: unknown;
    try {
      ({ content, thread, stream } = JSON.parse(body));
    } catch {
      content = undefined;
    }
    if (typeof content !== 'string' || !content.trim() || content.length > MAX_MESSAGE_CHARS)
      return json(res, 400, { error: 'send {"content": "...", "thread"?: [{role, content}]}', code: 'BAD_MESSAGE' });
    const threadMessages = thread === undefined ? undefined : threadOf(thread);
    if (threadMessages === null)
      return json(res, 400, { error: `thread: at most ${historyLimit} {role: user|assistant, content} messages`, code: 'BAD_THREAD' });
    const agent = await agents.agentFor(agentId);
    if (!agent) return json(res, 404, { error: 'no such agent', code: 'AGENT_NOT_FOUND' });
    if (stream === true) return streamChat(res, agent, content, threadMessages);
    const result = await enqueue(agentId, () => answer(agent, content, threadMessages));
    if (result.ok) return json(res, 200, { content: result.content, usage: result.usage });
    return json(res, 502, { error: result.error, code: result.code });
  };
}
