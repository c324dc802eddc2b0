import { agentChatContract } from '../../shared/contract/agent-chat';
import { createHandler } from '../../shared/http/pipeline';
import { chatHistory, sendChatMessage } from './chat';

// `/api/agent` (getAgentAction, postAgentAction) is not built yet: it answers 501 through the pipeline.
export const handler = createHandler(agentChatContract, {
  getChatMessages: async ({ auth, query }) => chatHistory(auth, query.agentId, query.limit, query.before),
  postChatMessage: async ({ auth, body }) => sendChatMessage(auth, body.agentId, body.message),
});
