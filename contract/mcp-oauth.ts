import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody, IsoDate, ResourceId } from './common';
import { MCP_RESOURCE_METADATA_PATH } from './mcp';
import { defineGroup, lazySchema } from './route';

/**
 * OAuth 2.1 for the MCP server, as the MCP authorization spec has it: protected-resource metadata
 * (RFC 9728), authorization-server metadata (RFC 8414), dynamic client registration (RFC 7591), the
 * authorization code grant with PKCE, refresh and revocation (RFC 7009). The authorization endpoint
 * is the console's consent page, which calls the two `/api/oauth/authorize` routes as the signed-in account.
 */

/** What an access token may do: `read` lists and reads; `agents` also acts on agents; `billing` also reads usage and sets budgets. */
export const MCP_OAUTH_SCOPES = ['read', 'agents', 'billing'] as const;
export type McpOAuthScope = (typeof MCP_OAUTH_SCOPES)[number];
export const MCP_OAUTH_DEFAULT_SCOPE = 'read agents';

export { MCP_ACCESS_TOKEN_PREFIX } from './mcp-tokens';

/** Where the console's consent page lives: the authorization endpoint of the metadata. */
export const MCP_OAUTH_CONSENT_PATH = '/oauth/authorize';

export const OAuthErrorBody = lazySchema(() => z.looseObject({ error: z.string(), error_description: z.optional(z.string()) }));

const ProtectedResourceMetadata = lazySchema(() =>
  z.looseObject({
    resource: z.url(),
    authorization_servers: z.array(z.url()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.literal('header')),
    resource_name: z.string(),
  }),
);

const AuthorizationServerMetadata = lazySchema(() =>
  z.looseObject({
    issuer: z.url(),
    authorization_endpoint: z.url(),
    token_endpoint: z.url(),
    registration_endpoint: z.url(),
    revocation_endpoint: z.url(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.literal('S256')),
    token_endpoint_auth_methods_supported: z.array(z.string()),
  }),
);

export const ClientRegistrationBody = lazySchema(() =>
  z.looseObject({
    redirect_uris: z.array(z.string().check(z.minLength(1), z.maxLength(2048))).check(z.minLength(1), z.maxLength(10)),
    client_name: z.optional(z.string().check(z.maxLength(200))),
    token_endpoint_auth_method: z.optional(z.string().check(z.maxLength(64))),
    grant_types: z.optional(z.array(z.string().check(z.maxLength(64))).check(z.maxLength(5))),
    response_types: z.optional(z.array(z.string().check(z.maxLength(64))).check(z.maxLength(5))),
    scope: z.optional(z.string().check(z.maxLength(200))),
  }),
);

const AuthorizationFields = {
  client_id: () => z.string().check(z.minLength(1), z.maxLength(64)),
  redirect_uri: () => z.string().check(z.minLength(1), z.maxLength(2048)),
  response_type: () => z.string().check(z.maxLength(32)),
  code_challenge: () => z.string().check(z.maxLength(128)),
  code_challenge_method: () => z.string().check(z.maxLength(16)),
  scope: () => z.optional(z.string().check(z.maxLength(200))),
  state: () => z.optional(z.string().check(z.maxLength(1024))),
  resource: () => z.optional(z.string().check(z.maxLength(2048))),
};

const authorizationShape = () =>
  Object.fromEntries(Object.entries(AuthorizationFields).map(([k, f]) => [k, f()])) as {
    [K in keyof typeof AuthorizationFields]: ReturnType<(typeof AuthorizationFields)[K]>;
  };

export const AuthorizationQuery = lazySchema(() => z.strictObject(authorizationShape()));
export const AuthorizationDecisionBody = lazySchema(() => z.strictObject({ ...authorizationShape(), decision: z.enum(['allow', 'deny']) }));

const Connection = lazySchema(() => z.object({ clientId: z.string(), clientName: z.string(), scope: z.string(), resource: z.string(), createdAt: IsoDate() }));

const TokenAnswer = lazySchema(() =>
  z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().check(z.int()), refresh_token: z.string(), scope: z.string() }),
);

const formBody = lazySchema(() => z.string().check(z.describe('application/x-www-form-urlencoded, as RFC 6749 has it')));

const metadataRoute = <O extends string, P extends string>(operation: O, path: P) =>
  ({
    operation,
    method: 'GET',
    path,
    auth: 'none',
    summary: 'RFC 9728 protected-resource metadata of the MCP server: its resource URL, authorization server and scopes.',
    responses: () => ({ 200: ProtectedResourceMetadata(), ...commonErrorResponses() }),
  }) as const;

export const mcpOAuthContract = defineGroup({
  group: 'mcp-oauth',
  description: 'OAuth 2.1 authorization of the MCP server: discovery metadata, client registration, consent, tokens, revocation, connected clients.',
  dynamoOnly: true,
  routes: [
    metadataRoute('getProtectedResourceMetadata', '/.well-known/oauth-protected-resource'),
    metadataRoute('getMcpProtectedResourceMetadata', MCP_RESOURCE_METADATA_PATH),
    {
      operation: 'getAuthorizationServerMetadata',
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      auth: 'none',
      summary: 'RFC 8414 authorization-server metadata: endpoints, scopes, PKCE S256, public clients.',
      responses: () => ({ 200: AuthorizationServerMetadata(), ...commonErrorResponses() }),
    },
    {
      operation: 'registerOAuthClient',
      method: 'POST',
      path: '/api/oauth/register',
      auth: 'none',
      rateLimit: 'register',
      summary: 'RFC 7591 dynamic client registration of a public client (PKCE, no secret).',
      description:
        'Redirect URIs must be https, or http on a loopback address (RFC 8252). Refusals answer 400 in the OAuth shape (`invalid_redirect_uri`, `invalid_client_metadata`).',
      body: ClientRegistrationBody,
      bodyHandling: { validatedBy: 'handler', open: true },
      example: { redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], client_name: 'Claude' },
      responses: () => ({
        201: z.looseObject({
          client_id: z.string(),
          client_id_issued_at: z.number().check(z.int()),
          client_name: z.string(),
          redirect_uris: z.array(z.string()),
        }),
        ...commonErrorResponses(),
        400: OAuthErrorBody(),
      }),
    },
    {
      operation: 'getOAuthAuthorization',
      method: 'GET',
      path: '/api/oauth/authorize',
      auth: 'session',
      summary: 'For the consent page: the client asking and the scopes it asks for, once the request is checked.',
      description:
        'An unknown client, an unregistered redirect URI or a malformed request answers 400 in the OAuth shape, shown to the person rather than redirected.',
      query: AuthorizationQuery,
      responses: () => ({
        200: z.object({ clientId: z.string(), clientName: z.string(), redirectUri: z.string(), scopes: z.array(z.enum(MCP_OAUTH_SCOPES)) }),
        ...commonErrorResponses(),
        400: OAuthErrorBody(),
        404: OAuthErrorBody(),
      }),
    },
    {
      operation: 'decideOAuthAuthorization',
      method: 'POST',
      path: '/api/oauth/authorize',
      auth: 'session',
      summary: "The signed-in account's Allow or Deny: the client's redirect URI with a code (or `error=access_denied`) and the state.",
      body: AuthorizationDecisionBody,
      example: {
        client_id: 'mcpc_0a1b2c3d4e5f',
        redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        scope: 'read agents',
        state: 'af0ifjsldkj',
        decision: 'allow',
      },
      responses: () => ({
        200: z.object({ redirect: z.url() }),
        ...commonErrorResponses(),
        400: z.union([OAuthErrorBody(), ErrorBody()]),
        404: OAuthErrorBody(),
      }),
    },
    {
      operation: 'exchangeOAuthToken',
      method: 'POST',
      path: '/api/oauth/token',
      auth: 'none',
      summary: 'The token endpoint: an authorization code (with its PKCE verifier) or a refresh token for an access token and a new refresh token.',
      description:
        'Every refresh rotates the refresh token: the one presented stops working. Refusals answer 400 `{error, error_description}` (`invalid_grant`...).',
      body: formBody,
      bodyHandling: { kind: 'raw' },
      responses: () => ({ 200: TokenAnswer(), ...commonErrorResponses(), 400: OAuthErrorBody() }),
    },
    {
      operation: 'revokeOAuthToken',
      method: 'POST',
      path: '/api/oauth/revoke',
      auth: 'none',
      summary: 'RFC 7009 revocation: revoking an access or a refresh token ends its grant, so the other token stops too. Always 200.',
      body: formBody,
      bodyHandling: { kind: 'raw' },
      responses: () => ({ 200: z.object({}), ...commonErrorResponses(), 400: OAuthErrorBody() }),
    },
    {
      operation: 'listOAuthConnections',
      method: 'GET',
      path: '/api/oauth/connections',
      auth: 'session',
      summary: 'The MCP clients the account authorized, with their scopes.',
      responses: () => ({ 200: z.object({ connections: z.array(Connection()) }), ...commonErrorResponses() }),
    },
    {
      operation: 'revokeOAuthConnection',
      method: 'DELETE',
      path: '/api/oauth/connections/{clientId}',
      auth: 'session',
      summary: 'Revoke a connected client: every token it holds for the account stops at once. 404 when it holds none.',
      params: () => z.strictObject({ clientId: ResourceId() }),
      responses: () => ({ 200: z.object({ success: z.literal(true) }), 404: ErrorBody(), ...commonErrorResponses() }),
    },
  ],
});
