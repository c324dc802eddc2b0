import { MCP_PATH, MCP_RESOURCE_METADATA_PATH, mcpContract } from '#contract/mcp';
import { MCP_ACCESS_TOKEN_PREFIX } from '#contract/mcp-oauth';
import { delegatedSession, OAuthError, verifyAccessToken } from '#domain/auth/mcp-oauth';
import { config } from '#platform/config';
import { unauthenticated } from '#platform/errors';
import { createHandler, type OperationContext } from '#http/pipeline';
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

const resource = () => new URL(MCP_PATH, config().appUrl).href;

/** Who calls, what they may call, and the credential the tools call the API with. */
async function callerOf(ctx: OperationContext) {
  const authorization = ctx.headers.authorization;
  if (ctx.auth) {
    // A session cookie is bound to the console's CSRF token, so tools could not call on with it.
    if (!authorization) throw unauthenticated('send the credential as Authorization: Bearer', 'AUTH_REQUIRED');
    return { userId: ctx.auth.userId, scopes: EVERY_SCOPE, credential: authorization };
  }
  const token = /^bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token?.startsWith(MCP_ACCESS_TOKEN_PREFIX)) throw unauthenticated('authentication required', 'AUTH_REQUIRED');
  try {
    const holder = await verifyAccessToken(token, resource());
    return { userId: holder.userId, scopes: new Set<ToolScope>(holder.scopes), credential: `Bearer ${await delegatedSession(holder)}` };
  } catch (err) {
    if (err instanceof OAuthError) throw unauthenticated(err.message, 'TOKEN_INVALID');
    throw err;
  }
}

export const handler = createHandler(
  mcpContract,
  {
    postMcpMessage: async (ctx) => {
      const { userId, scopes, credential } = await callerOf(ctx);
      const base = config().appUrl;
      const server = mcpServerFor({ userId, api: new PlatformApi(base, credential, ctx.requestId) }, scopes);
      return answerMcpMessage(server, ctx, new URL(MCP_PATH, base).href);
    },
    openMcpStream: notOffered,
    endMcpSession: notOffered,
  },
  { challenge: () => `Bearer resource_metadata="${new URL(MCP_RESOURCE_METADATA_PATH, config().appUrl).href}"` },
);
