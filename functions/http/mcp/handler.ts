import { MCP_PATH, MCP_RESOURCE_METADATA_PATH, mcpContract } from '#contract/mcp';
import { config } from '#platform/config';
import { unauthenticated } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { PlatformApi } from './platform-api';
import { mcpServerFor } from './server';
import type { ToolScope } from './tools';
import { answerMcpMessage } from './transport';

/** An API key or a session acts as its account does over HTTP: every tool. */
const EVERY_SCOPE: ReadonlySet<ToolScope> = new Set(['read', 'agents', 'billing']);

/** Stateless servers answer the stream and session methods of Streamable HTTP with 405. */
const notOffered = async () =>
  reply.json(405, { error: 'the MCP server is stateless: send messages with POST', code: 'METHOD_NOT_ALLOWED' }, { allow: 'POST' });

export const handler = createHandler(
  mcpContract,
  {
    postMcpMessage: async (ctx) => {
      // Tools call the API with the caller's credential, which a session cookie (bound to the console's CSRF token) is not.
      if (!ctx.headers.authorization) throw unauthenticated('send the credential as Authorization: Bearer', 'AUTH_REQUIRED');
      const base = config().appUrl;
      const api = new PlatformApi(base, ctx.headers.authorization, ctx.requestId);
      const server = mcpServerFor({ userId: ctx.auth.userId, api }, EVERY_SCOPE);
      return answerMcpMessage(server, ctx, new URL(MCP_PATH, base).href);
    },
    openMcpStream: notOffered,
    endMcpSession: notOffered,
  },
  { challenge: () => `Bearer resource_metadata="${new URL(MCP_RESOURCE_METADATA_PATH, config().appUrl).href}"` },
);
