import type { AuthContext } from '#domain/auth/authenticate';
import { streamAgentExchange } from '#domain/chat/agent-stream';
import { StreamReply } from '#http/reply';
import { keepWhileWaking } from './chat';

/**
 * `POST /api/chat` with `stream: true` (or `Accept: text/event-stream`): the exchange of
 * domain/chat/agent-stream.ts as server-sent events, `delta` {content} per piece, then `done`
 * {agentId, message, reply, usage} (the JSON answer's shape), or `error` {error, code}. Refusals
 * before the first piece keep their status (402, 404, 409, 502); past the wake wait, 202 and
 * delivery once the instance runs.
 */
export async function streamChatMessage(auth: AuthContext, agentId: string, message: string) {
  const answer = await streamAgentExchange(auth, agentId, message);
  if (answer.state === 'waking') return keepWhileWaking(auth.userId, { operationId: answer.operationId }, { agentId, message, source: 'chat' });
  return new StreamReply(answer.events);
}
