import { agentChatContract } from '../../shared/contract/agent-chat';
import { createHandler } from '../../shared/http/pipeline';
import { streamingEntry } from '../../shared/http/response-streaming';
import { readAgentAction, runAgentAction } from './agent-actions';
import { chatHistory, postChatMessage } from './chat';
import { streamChatMessage, wantsEventStream } from './chat-stream';

export const handler = createHandler(agentChatContract, {
  getAgentAction: async ({ auth, query }) => readAgentAction(auth, query),
  postAgentAction: async ({ auth, body }) => runAgentAction(auth, body),
  getChatMessages: async ({ auth, query }) => chatHistory(auth, query.agentId, query.limit, query.before),
  postChatMessage: async ({ auth, body, headers }) =>
    body.stream || wantsEventStream(headers.accept) ? streamChatMessage(auth, body.agentId, body.message) : postChatMessage(auth, body.agentId, body.message),
});

/** The Function URL entry (response streaming): `POST /api/chat` with `stream: true` sends its events as they come. */
export const streamHandler = streamingEntry(agentChatContract, handler);
