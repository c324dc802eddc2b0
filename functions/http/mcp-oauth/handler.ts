import { MCP_PATH } from '#contract/mcp';
import { MCP_OAUTH_CONSENT_PATH, MCP_OAUTH_SCOPES, mcpOAuthContract } from '#contract/mcp-oauth';
import {
  type AuthorizationRequest,
  type ClientRegistration,
  checkAuthorizationRequest,
  decideAuthorization,
  exchangeToken,
  listConnections,
  OAuthError,
  registerClient,
  revokeConnection,
  revokeToken,
} from '#domain/auth/mcp-oauth';
import { config } from '#platform/config';
import { notFound } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { reply } from '#http/reply';
import { ClientRegistrationBody } from '#contract/mcp-oauth';

const issuer = () => new URL(config().appUrl).origin;
const resource = () => new URL(MCP_PATH, config().appUrl).href;
const at = (path: string) => new URL(path, config().appUrl).href;

/** OAuth answers are never cached (RFC 6749 §5.1), errors included. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** An OAuth refusal in the OAuth shape; anything else goes on to the pipeline's error table. */
async function inOAuthShape<T>(run: () => Promise<T>) {
  try {
    return await run();
  } catch (err) {
    if (err instanceof OAuthError) return reply.json(err.status, { error: err.oauthCode, error_description: err.message }, NO_STORE);
    throw err;
  }
}

const protectedResourceMetadata = async () => ({
  resource: resource(),
  authorization_servers: [issuer()],
  scopes_supported: [...MCP_OAUTH_SCOPES],
  bearer_methods_supported: ['header'],
  resource_name: 'Agent Hosting Platform MCP server',
});

export const handler = createHandler(mcpOAuthContract, {
  getProtectedResourceMetadata: protectedResourceMetadata,
  getMcpProtectedResourceMetadata: protectedResourceMetadata,
  getAuthorizationServerMetadata: async () => ({
    issuer: issuer(),
    authorization_endpoint: at(MCP_OAUTH_CONSENT_PATH),
    token_endpoint: at('/api/oauth/token'),
    registration_endpoint: at('/api/oauth/register'),
    revocation_endpoint: at('/api/oauth/revoke'),
    scopes_supported: [...MCP_OAUTH_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  }),
  registerOAuthClient: async ({ body }) => {
    const parsed = ClientRegistrationBody().safeParse(body);
    if (!parsed.success)
      return reply.json(
        400,
        { error: 'invalid_client_metadata', error_description: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') },
        NO_STORE,
      );
    return inOAuthShape(async () => reply.json(201, await registerClient(parsed.data as ClientRegistration), NO_STORE));
  },
  getOAuthAuthorization: ({ query }) =>
    inOAuthShape(async () => {
      const { client, scopes } = await checkAuthorizationRequest(query as AuthorizationRequest, resource());
      return { clientId: client.clientId, clientName: client.clientName, redirectUri: query.redirect_uri, scopes };
    }),
  decideOAuthAuthorization: ({ body, auth }) =>
    inOAuthShape(async () => {
      const { decision, ...request } = body;
      return decideAuthorization(auth.userId, request as AuthorizationRequest, decision === 'allow', resource(), issuer());
    }),
  exchangeOAuthToken: ({ rawBody }) => inOAuthShape(async () => reply.json(200, await exchangeToken(new URLSearchParams(rawBody), resource()), NO_STORE)),
  revokeOAuthToken: async ({ rawBody }) => {
    const token = new URLSearchParams(rawBody).get('token');
    if (!token) return reply.json(400, { error: 'invalid_request', error_description: 'token is required' }, NO_STORE);
    await revokeToken(token);
    return reply.json(200, {}, NO_STORE);
  },
  listOAuthConnections: async ({ auth }) => ({ connections: await listConnections(auth.userId) }),
  revokeOAuthConnection: async ({ auth, params }) => {
    if (!(await revokeConnection(auth.userId, params.clientId))) throw notFound('no connected client with this id');
    return { success: true as const };
  },
});
