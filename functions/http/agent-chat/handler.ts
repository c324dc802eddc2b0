import { agentChatContract } from '#contract/agent-chat';
import { createHandler } from '#http/pipeline';
import { streamingEntry } from '#http/response-streaming';

/**
 * Each route's module (with the runtime client, the wake path and the entitlements it calls) is
 * loaded on that route's first call: a container started for the chat does not parse the agent
 * actions, and the reverse.
 */
const agentActions = () => import('./agent-actions');
const chat = () => import('./chat');
const history = () => import('#domain/chat/chat');
const chatStream = () => import('./chat-stream');

/** `Accept: text/event-stream` asks for the stream as `stream: true` does. */
const wantsEventStream = (accept: string | undefined) => !!accept && /(^|,)\s*text\/event-stream/i.test(accept);

export const handler = createHandler(agentChatContract, {
  getAgentAction: async ({ auth, query }) => (await agentActions()).readAgentAction(auth, query),
  postAgentAction: async ({ auth, body }) => (await agentActions()).runAgentAction(auth, body),
  getChatMessages: async ({ auth, query }) => (await history()).chatHistory(auth, query.agentId, query.limit, query.before),
  postChatMessage: async ({ auth, body, headers }) =>
    body.stream || wantsEventStream(headers.accept)
      ? (await chatStream()).streamChatMessage(auth, body.agentId, body.message)
      : (await chat()).postChatMessage(auth, body.agentId, body.message),
});

/** The Function URL entry (response streaming): `POST /api/chat` with `stream: true` sends its events as they come. */
export const streamHandler = streamingEntry(agentChatContract, handler);
