import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { API_VERSION } from '#contract/version';
import { type Caller, type ToolScope, tools } from './tools';

const INSTRUCTIONS =
  "Manage the caller's hosted AI agents: provision them, start and stop their instance, chat with them, read and write their memory, " +
  'install and call skills, read logs, usage, budgets and schedules, and manage webhook endpoints. Every tool acts as the HTTP API does for the same credential.';

/** Each agent's log and memory as resources, listed from the caller's agents. */
const AGENT_RESOURCES = [
  {
    name: 'agent-log',
    kind: 'log',
    operation: 'getAgentLogs',
    description: "The agent's log, newest entries first.",
    request: (id: string) => ({ params: { id } }),
  },
  {
    name: 'agent-memory',
    kind: 'memory',
    operation: 'getMemory',
    description: "The agent's memory: every key with its value.",
    request: (id: string) => ({ query: { agentId: id } }),
  },
] as const;

interface AgentSummary {
  id: string;
  name?: string;
}

async function agentsOf(caller: Caller): Promise<AgentSummary[]> {
  const answer = await caller.api.call({ operation: 'listAgents' });
  const body = answer.body as { agents?: AgentSummary[] } | null;
  return answer.status === 200 && Array.isArray(body?.agents) ? body.agents : [];
}

/**
 * The MCP server of one request: stateless, so built for the caller and dropped with the answer.
 * Only the tools `scopes` allow are listed, and so callable.
 */
export function mcpServerFor(caller: Caller, scopes: ReadonlySet<ToolScope>): McpServer {
  const server = new McpServer({ name: 'agent-platform', title: 'Agent Hosting Platform', version: API_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of tools()) {
    if (!scopes.has(tool.scope)) continue;
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        annotations: { title: tool.title, openWorldHint: false, ...tool.annotations },
      },
      (args: Record<string, unknown>, extra) => tool.run(args, caller, extra),
    );
  }
  if (!scopes.has('read')) return server;
  for (const resource of AGENT_RESOURCES) {
    const template = new ResourceTemplate(`agent://{agentId}/${resource.kind}`, {
      list: async () => ({
        resources: (await agentsOf(caller)).map((agent) => ({
          uri: `agent://${agent.id}/${resource.kind}`,
          name: `${agent.name ?? agent.id} ${resource.kind}`,
          mimeType: 'application/json',
        })),
      }),
    });
    server.registerResource(
      resource.name,
      template,
      { description: resource.description, mimeType: 'application/json' },
      async (uri, variables): Promise<ReadResourceResult> => {
        const agentId = String(variables.agentId);
        const answer = await caller.api.call({ operation: resource.operation, ...resource.request(agentId) });
        // A refusal (another account's agent answers 404, like a missing one) is the read's error, not its content.
        if (answer.status >= 400) throw new Error(`${resource.kind} of ${agentId}: ${(answer.body as { error?: string } | null)?.error ?? answer.status}`);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(answer.body, null, 2) }] };
      },
    );
  }
  return server;
}
