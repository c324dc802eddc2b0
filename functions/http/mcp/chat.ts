import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { resultOf, type Caller, type ToolExtra } from './tools';

/**
 * chat_with_agent: `POST /api/chat` with `stream: true`, its `delta` events relayed as MCP progress
 * notifications (when the client asked for progress) and its `done` answer as the tool's result.
 * Through a buffering transport the events still come in order, only together.
 */

interface ChatEvents {
  done?: unknown;
  error?: { error?: string; code?: string };
}

async function relay(res: Response, onDelta: (text: string) => Promise<void>): Promise<ChatEvents> {
  const seen: ChatEvents = {};
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const event of pending.splice(0)) {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      if (event.event === 'delta' && typeof data.content === 'string') await onDelta(data.content);
      else if (event.event === 'done') seen.done = data;
      else if (event.event === 'error') seen.error = data as ChatEvents['error'];
    }
  }
  return seen;
}

async function send(caller: Caller, args: { agentId: string; message: string }, extra: ToolExtra) {
  return caller.api.fetch({
    operation: 'postChatMessage',
    body: { agentId: args.agentId, message: args.message, stream: true },
    accept: 'text/event-stream',
    signal: extra.signal,
  });
}

export async function chatWithAgent(args: Record<string, any>, caller: Caller, extra: ToolExtra): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  const onDelta = async (text: string) => {
    if (progressToken === undefined) return;
    progress += 1;
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message: text } });
  };

  const res = await send(caller, args as { agentId: string; message: string }, extra);
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A refusal (402, 404, 409, 429...) or a wake that outlasted the route's wait (202): the route's JSON answer.
    const text = await res.text();
    return resultOf({ status: res.status, body: text ? JSON.parse(text) : null });
  }
  const { done, error } = await relay(res, onDelta);
  if (done) return resultOf({ status: 200, body: done });
  return resultOf({ status: 502, body: { error: error?.error ?? 'the agent stopped answering', code: error?.code ?? 'AGENT_STREAM_ENDED' } });
}
