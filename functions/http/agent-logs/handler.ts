import { agentLogsContract } from '#contract/agent-logs';
import { createHandler } from '#http/pipeline';
import { agentLogs } from './logs';

export const handler = createHandler(agentLogsContract, {
  getAgentLogs: async ({ auth, params, query, headers }) => agentLogs(auth, params.id, query, headers.accept),
});
