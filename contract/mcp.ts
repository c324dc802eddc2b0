import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody } from './common';
import { defineGroup, lazySchema } from './route';

/** Where the MCP server answers: the one URL a user gives an MCP client. */
export const MCP_PATH = '/mcp';

/** The RFC 9728 protected-resource metadata of the MCP server, named in every 401's `WWW-Authenticate`. */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** One JSON-RPC 2.0 message (or a batch of them); the MCP SDK's transport judges its shape. */
const JsonRpcMessage = lazySchema(() =>
  z
    .union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))])
    .check(z.describe('a JSON-RPC 2.0 request, notification or response of the Model Context Protocol')),
);

const JsonRpcError = lazySchema(() =>
  z.looseObject({
    jsonrpc: z.literal('2.0'),
    error: z.looseObject({ code: z.number(), message: z.string() }),
    id: z.nullable(z.union([z.string(), z.number()])),
  }),
);

export const mcpContract = defineGroup({
  group: 'mcp',
  description:
    'The remote Model Context Protocol server (Streamable HTTP, stateless): tools and resources over the same operations as the HTTP API, for MCP clients such as Claude, Cursor and VS Code.',
  dynamoOnly: false,
  // A tool call answers server-sent events (progress notifications, then the result); its Function URL twin streams them.
  streams: true,
  routes: [
    {
      operation: 'postMcpMessage',
      method: 'POST',
      path: MCP_PATH,
      // An API key or session is judged by the pipeline; an OAuth access token (which no other route takes) by the operation.
      auth: 'optional',
      summary: 'Send one MCP JSON-RPC message: initialize, tools/list, tools/call, resources/list, resources/read...',
      description: [
        'Streamable HTTP in stateless mode: every POST stands alone and no `Mcp-Session-Id` is issued. Send `Accept: application/json, text/event-stream`;',
        'a request is answered as `text/event-stream` (progress notifications for a `progressToken`, then the JSON-RPC result), a notification with 202.',
        'Authenticate with `Authorization: Bearer sk_…` (an API key), a session token, or an OAuth access token of this server (its scopes choose the tools); a 401 carries',
        `\`WWW-Authenticate: Bearer resource_metadata="<origin>${MCP_RESOURCE_METADATA_PATH}"\`.`,
        "Each tool calls the HTTP route it stands for with the caller's credential, so tenant rules, plan checks, rate limits, idempotency and metering are the route's own.",
      ].join(' '),
      body: JsonRpcMessage,
      bodyHandling: { validatedBy: 'handler', open: true },
      example: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      responses: () => ({
        200: z.string().check(z.describe('`text/event-stream` of JSON-RPC messages, or one JSON-RPC message as `application/json`')),
        202: z.null().check(z.describe('a notification or response was accepted; no body')),
        406: JsonRpcError(),
        415: z.union([JsonRpcError(), ErrorBody()]),
        ...commonErrorResponses(),
        400: z.union([JsonRpcError(), ErrorBody()]),
      }),
    },
    {
      operation: 'openMcpStream',
      method: 'GET',
      path: MCP_PATH,
      auth: 'none',
      summary: 'Not offered: the server is stateless and pushes nothing outside a request (405, `Allow: POST`).',
      responses: () => ({ 405: ErrorBody() }),
    },
    {
      operation: 'endMcpSession',
      method: 'DELETE',
      path: MCP_PATH,
      auth: 'none',
      summary: 'Not offered: the server keeps no session to end (405, `Allow: POST`).',
      responses: () => ({ 405: ErrorBody() }),
    },
  ],
});
