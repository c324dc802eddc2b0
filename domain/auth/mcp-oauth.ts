import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { MCP_ACCESS_TOKEN_PREFIX, MCP_OAUTH_DEFAULT_SCOPE, MCP_OAUTH_SCOPES, type McpOAuthScope } from '#contract/mcp-oauth';
import {
  deleteOAuthAccessToken,
  deleteOAuthGrant,
  getOAuthAccessToken,
  getOAuthClient,
  getOAuthGrant,
  issueOAuthCode,
  issueOAuthRefreshToken,
  listOAuthGrants,
  type OAuthClient,
  type OAuthGrant,
  type OAuthTokenClaims,
  putOAuthAccessToken,
  putOAuthClient,
  putOAuthGrant,
  takeOAuthCode,
  takeOAuthRefreshToken,
} from '#data/oauth-grants';
import { getUser } from '#data/users';
import { DomainError } from '#platform/errors';
import { sessionIdentity } from './authenticate';
import { issueSessionToken } from './jwt';

/**
 * OAuth 2.1 for the MCP server (the MCP authorization spec): public clients registered dynamically
 * (RFC 7591), the authorization code grant with PKCE (S256 only), access tokens bound to the MCP
 * resource (RFC 8707 `resource`, checked on every use) with scopes, refresh tokens rotated on each
 * use, and revocation (RFC 7009). Tokens are opaque, random and stored only as their SHA-256, so a
 * revocation takes effect on the very next request.
 */

const ACCESS_TOKEN_PREFIX = MCP_ACCESS_TOKEN_PREFIX;
const REFRESH_TOKEN_PREFIX = 'mcp_rt_';
const CODE_PREFIX = 'mcp_code_';
export const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const CODE_SECONDS = 300;

/** An OAuth error (RFC 6749 §5.2 codes), answered in the OAuth shape `{error, error_description}`. */
export class OAuthError extends DomainError {
  constructor(
    readonly oauthCode: string,
    description: string,
    readonly status = 400,
  ) {
    super(status === 401 ? 'unauthenticated' : status === 404 ? 'notFound' : 'invalid', description, oauthCode);
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const randomToken = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
const nowSeconds = (now: number) => Math.floor(now / 1000);

/** The scopes a request names, each known; none named is the default. `agents` and `billing` also read. */
export function parseScopes(scope: string | undefined): McpOAuthScope[] {
  const named = (scope ?? MCP_OAUTH_DEFAULT_SCOPE).split(' ').filter(Boolean);
  const unknown = named.filter((s) => !(MCP_OAUTH_SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new OAuthError('invalid_scope', `unknown scope ${unknown.join(', ')}; offered: ${MCP_OAUTH_SCOPES.join(' ')}`);
  const scopes = new Set(named as McpOAuthScope[]);
  if (scopes.has('agents') || scopes.has('billing')) scopes.add('read');
  return MCP_OAUTH_SCOPES.filter((s) => scopes.has(s));
}

/** A redirect URI a client may register: https, or http on loopback (native and CLI clients, RFC 8252). */
function acceptableRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

export interface ClientRegistration {
  redirect_uris: string[];
  client_name?: string;
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  response_types?: string[];
  scope?: string;
}

export async function registerClient(request: ClientRegistration, now = new Date()) {
  const bad = request.redirect_uris.find((uri) => !acceptableRedirectUri(uri));
  if (bad !== undefined) throw new OAuthError('invalid_redirect_uri', `redirect URIs must be https, or http on loopback, without a fragment: ${bad}`);
  if (request.token_endpoint_auth_method && request.token_endpoint_auth_method !== 'none')
    throw new OAuthError('invalid_client_metadata', 'only public clients are registered: token_endpoint_auth_method must be none (PKCE protects the code)');
  const grantTypes = request.grant_types ?? ['authorization_code', 'refresh_token'];
  if (grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
    throw new OAuthError('invalid_client_metadata', 'grant_types may be authorization_code and refresh_token');
  if (request.response_types?.some((r) => r !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may only be code');
  const client: OAuthClient = {
    clientId: `mcpc_${randomUUID().replaceAll('-', '')}`,
    clientName: request.client_name?.trim() || 'Unnamed MCP client',
    redirectUris: request.redirect_uris,
    createdAt: now.toISOString(),
  };
  await putOAuthClient(client);
  return {
    client_id: client.clientId,
    client_id_issued_at: nowSeconds(now.getTime()),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    grant_types: grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(request.scope ? { scope: parseScopes(request.scope).join(' ') } : {}),
  };
}

export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  code_challenge: string;
  code_challenge_method: string;
  scope?: string;
  state?: string;
  resource?: string;
}

/**
 * The request checked before the account is asked: an unknown client or a redirect URI it did not
 * register is shown to the person (never redirected to, RFC 6749 §4.1.2.1); the rest is the client's.
 */
export async function checkAuthorizationRequest(request: AuthorizationRequest, resource: string) {
  const client = await getOAuthClient(request.client_id);
  if (!client) throw new OAuthError('invalid_client', 'this client is not registered', 404);
  if (!client.redirectUris.includes(request.redirect_uri)) throw new OAuthError('invalid_request', 'the redirect URI is not one the client registered');
  if (request.response_type !== 'code') throw new OAuthError('unsupported_response_type', 'response_type must be code');
  if (request.code_challenge_method !== 'S256') throw new OAuthError('invalid_request', 'PKCE with code_challenge_method S256 is required');
  if (!/^[A-Za-z0-9_-]{43}$/.test(request.code_challenge))
    throw new OAuthError('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier');
  if (request.resource !== undefined && request.resource !== resource) throw new OAuthError('invalid_target', `the only resource here is ${resource}`);
  return { client, scopes: parseScopes(request.scope) };
}

const redirectWith = (uri: string, params: Record<string, string | undefined>) => {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
};

/** The account's decision: a code bound to the client, redirect URI, PKCE challenge, scopes and resource; or `access_denied`. */
export async function decideAuthorization(userId: string, request: AuthorizationRequest, allow: boolean, resource: string, issuer: string, now = Date.now()) {
  const { client, scopes } = await checkAuthorizationRequest(request, resource);
  if (!allow) return { redirect: redirectWith(request.redirect_uri, { error: 'access_denied', state: request.state, iss: issuer }) };
  const grant: OAuthGrant = {
    clientId: client.clientId,
    clientName: client.clientName,
    grantId: randomUUID(),
    scope: scopes.join(' '),
    resource,
    createdAt: new Date(now).toISOString(),
  };
  await putOAuthGrant(userId, grant);
  const code = randomToken(CODE_PREFIX);
  await issueOAuthCode(
    sha256(code),
    {
      userId,
      clientId: client.clientId,
      grantId: grant.grantId,
      scope: grant.scope,
      resource,
      redirectUri: request.redirect_uri,
      codeChallenge: request.code_challenge,
    },
    nowSeconds(now) + CODE_SECONDS,
  );
  return { redirect: redirectWith(request.redirect_uri, { code, state: request.state, iss: issuer }) };
}

async function issueTokens(claims: OAuthTokenClaims, now: number) {
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX);
  const refreshToken = randomToken(REFRESH_TOKEN_PREFIX);
  await putOAuthAccessToken(sha256(accessToken), claims, nowSeconds(now) + ACCESS_TOKEN_SECONDS);
  await issueOAuthRefreshToken(sha256(refreshToken), claims, nowSeconds(now) + REFRESH_TOKEN_SECONDS);
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refreshToken, scope: claims.scope };
}

const pkceHolds = (verifier: string, challenge: string) => {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
};

/** A grant still held: the account did not revoke it and has not granted the client anew since. */
async function grantHolds(claims: OAuthTokenClaims) {
  const grant = await getOAuthGrant(claims.userId, claims.clientId);
  return grant?.grantId === claims.grantId ? grant : undefined;
}

/** The token endpoint (RFC 6749 §4.1.3 and §6), form fields as sent. */
export async function exchangeToken(form: URLSearchParams, resource: string, now = Date.now()) {
  const grantType = form.get('grant_type');
  const clientId = form.get('client_id');
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
  const requested = form.get('resource');
  if (requested !== null && requested !== resource) throw new OAuthError('invalid_target', `the only resource here is ${resource}`);
  if (grantType === 'authorization_code') {
    const code = form.get('code');
    const verifier = form.get('code_verifier');
    if (!code || !verifier) throw new OAuthError('invalid_request', 'code and code_verifier are required');
    const claims = await takeOAuthCode(sha256(code), now);
    if (!claims || claims.clientId !== clientId || claims.redirectUri !== form.get('redirect_uri') || !pkceHolds(verifier, claims.codeChallenge))
      throw new OAuthError('invalid_grant', 'the code is unknown, used, expired, or not for this client, redirect URI and verifier');
    const held: OAuthTokenClaims = {
      userId: claims.userId,
      clientId: claims.clientId,
      grantId: claims.grantId,
      scope: claims.scope,
      resource: claims.resource,
    };
    if (!(await grantHolds(held))) throw new OAuthError('invalid_grant', 'the grant was revoked');
    return issueTokens(held, now);
  }
  if (grantType === 'refresh_token') {
    const token = form.get('refresh_token');
    if (!token) throw new OAuthError('invalid_request', 'refresh_token is required');
    const claims = await takeOAuthRefreshToken(sha256(token), now);
    if (!claims || claims.clientId !== clientId) throw new OAuthError('invalid_grant', 'the refresh token is unknown, used, expired or not this client’s');
    if (!(await grantHolds(claims))) throw new OAuthError('invalid_grant', 'the grant was revoked');
    // A narrower scope may be asked for on refresh, never a wider one.
    const scope = form.get('scope');
    const narrowed = scope ? parseScopes(scope).filter((s) => claims.scope.split(' ').includes(s)) : claims.scope.split(' ');
    return issueTokens({ ...claims, scope: narrowed.join(' ') }, now);
  }
  throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
}

/**
 * RFC 7009: revoking either token of a grant ends the grant, so its other tokens stop too. An
 * unknown or already revoked token is not an error (the spec answers 200 either way).
 */
export async function revokeToken(token: string): Promise<void> {
  const claims = token.startsWith(REFRESH_TOKEN_PREFIX) ? await takeOAuthRefreshToken(sha256(token), Date.now()) : await deleteOAuthAccessToken(sha256(token));
  if (claims) await deleteOAuthGrant(claims.userId, claims.clientId, claims.grantId);
}

export interface McpTokenHolder {
  userId: string;
  clientId: string;
  scopes: McpOAuthScope[];
}

/** The holder of an access token for `resource`, or a 401 (unknown, expired, revoked, or for another resource). */
export async function verifyAccessToken(token: string, resource: string, now = Date.now()): Promise<McpTokenHolder> {
  const claims = await getOAuthAccessToken(sha256(token), nowSeconds(now));
  if (!claims || claims.resource !== resource || !(await grantHolds(claims)))
    throw new OAuthError('invalid_token', 'the access token is unknown, expired, revoked or not for this resource', 401);
  return { userId: claims.userId, clientId: claims.clientId, scopes: parseScopes(claims.scope) };
}

export async function listConnections(userId: string) {
  const grants = await listOAuthGrants(userId);
  return grants.map((g) => ({ clientId: g.clientId, clientName: g.clientName, scope: g.scope, resource: g.resource, createdAt: g.createdAt }));
}

export async function revokeConnection(userId: string, clientId: string): Promise<boolean> {
  const grant = await getOAuthGrant(userId, clientId);
  if (!grant) return false;
  return deleteOAuthGrant(userId, clientId, grant.grantId);
}

/** How long the credential lasts that the MCP server calls the API with for one request of a token holder. */
const DELEGATED_SESSION_SECONDS = 300;

/**
 * The credential the MCP server presents to the API's routes on behalf of a token holder: a
 * short-lived session token of the account, minted after the tool's scope was checked and never
 * handed to the client, so the routes judge the call exactly as they judge the account's own.
 */
export async function delegatedSession(holder: McpTokenHolder): Promise<string> {
  const user = await getUser(holder.userId, true);
  if (!user) throw new OAuthError('invalid_token', 'the account no longer exists', 401);
  const { token } = await issueSessionToken(sessionIdentity(user), Date.now(), DELEGATED_SESSION_SECONDS);
  return token;
}
