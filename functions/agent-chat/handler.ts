import { agentChatContract } from '../../shared/contract/agent-chat';
import { createHandler } from '../../shared/http/pipeline';
import { readAgentAction, runAgentAction } from './agent-actions';
import { chatHistory, postChatMessage } from './chat';

export const handler = createHandler(agentChatContract, {
  getAgentAction: async ({ auth, query }) => readAgentAction(auth, query),
  postAgentAction: async ({ auth, body }) => runAgentAction(auth, body),
  getChatMessages: async ({ auth, query }) => chatHistory(auth, query.agentId, query.limit, query.before),
  postChatMessage: async ({ auth, body }) => postChatMessage(auth, body.agentId, body.message),
});
