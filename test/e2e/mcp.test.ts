import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { signUpVerified, startLocalStack, stopLocalStack, type LocalStack } from '../helpers/local-stack';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';
import { launchChromium } from './console-browser';

/** Where the connector's browser comes back with the code: intercepted in the browser, nothing listens there. */
const CALLBACK = 'http://127.0.0.1:9/oauth/callback';

/** A remote connector's side of the OAuth flow, kept in memory as the SDK asks of a client. */
class ConnectorAuth implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl = CALLBACK;
  readonly clientMetadata: OAuthClientMetadata = {
    redirect_uris: [CALLBACK],
    client_name: 'E2E connector',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'read agents',
  };
  clientInformation = () => this.client;
  saveClientInformation = (client: OAuthClientInformationMixed) => void (this.client = client);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

/**
 * The remote MCP server against `npm start`, driven by the official MCP SDK client over Streamable
 * HTTP with an `sk_` API key, as Claude, Cursor or VS Code would drive it.
 */

const OWNER = 'mcp-owner@example.com';
const OTHER = 'mcp-other@example.com';
const PASSWORD = 'correct-horse-battery';

describe('the MCP server on the local stack', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-mcp-e2e-'));
  let stack: LocalStack | undefined;
  let model: FakeModelServer;
  let base = '';
  const keys = { owner: '', other: '' };
  const clients: Client[] = [];
  let owner: Client;
  let other: Client;
  let agentId = '';
  let browser: Browser | undefined;

  async function apiKeyOf(email: string) {
    const { token } = await signUpVerified(base, dataDir, email);
    const res = await fetch(`${base}/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'MCP client' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { key: string }).key;
  }

  async function connect(key: string) {
    const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const json = (result: CallToolResult) => result.structuredContent as any;

  beforeAll(async () => {
    model = await startFakeModelServer();
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAILS: OWNER,
      MODEL_API_BASE_URL: model.baseUrl,
      MODEL_API_KEY: 'sk-e2e-provider-key',
      PROVISION_HEALTH_INTERVAL_MS: '250',
    });
    base = await stack.ready;
    keys.owner = await apiKeyOf(OWNER);
    keys.other = await apiKeyOf(OTHER);
    owner = await connect(keys.owner);
    other = await connect(keys.other);
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await browser?.close();
    await stopLocalStack(stack, dataDir);
    await model?.close();
  });

  it('initializes and lists the tools, each with a schema, a description and its annotations', async () => {
    expect(owner.getServerVersion()).toMatchObject({ name: 'agent-platform' });
    expect(owner.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    const { tools } = await owner.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      'list_agents',
      'get_agent',
      'provision_agent',
      'start_instance',
      'stop_instance',
      'restart_instance',
      'update_instance',
      'repair_instance',
      'reset_instance_memory',
      'chat_with_agent',
      'get_agent_history',
      'read_memory',
      'write_memory',
      'list_skills',
      'install_skill',
      'call_skill',
      'get_event_log',
      'get_agent_log',
      'get_usage',
      'get_budget',
      'list_schedules',
      'list_webhook_endpoints',
    ]) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(20);
      expect(tool.inputSchema.type).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
      expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
      expect(typeof tool.annotations?.idempotentHint).toBe('boolean');
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('list_agents')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('reset_instance_memory')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('provision_agent')!.inputSchema.required).toContain('name');
    expect(byName.get('start_instance')!.inputSchema.properties).toHaveProperty('waitFor');
  });

  it('provisions an agent and waits until it runs', async () => {
    const provisioned = await call(owner, 'provision_agent', { name: 'MCP booking agent' });
    expect(provisioned.isError).toBeFalsy();
    expect(json(provisioned).agent).toMatchObject({ name: 'MCP booking agent', status: 'provisioning' });
    agentId = json(provisioned).agent.id;
    const waited = await call(owner, 'get_instance', { waitFor: 'running', timeout: 25 });
    expect(json(waited)).toMatchObject({ status: 'running', reached: true });
    const listed = json(await call(owner, 'list_agents'));
    expect(listed.agents.map((a: { id: string }) => a.id)).toContain(agentId);
  }, 60_000);

  it('chats with the agent: the answer streams as progress notifications before the whole answer arrives as the result', async () => {
    const question = 'Which venues in Bristol hold three hundred people?';
    const progress: string[] = [];
    let firstProgress!: () => void;
    const progressSeen = new Promise<void>((resolve) => (firstProgress = resolve));
    // The model holds its last piece until the client has seen progress: were the notifications held
    // back until the result, this call would never finish.
    model.beforeLastChunk = () => progressSeen;
    try {
      const result = (await owner.callTool({ name: 'chat_with_agent', arguments: { agentId, message: question } }, undefined, {
        onprogress: (p) => {
          progress.push(p.message ?? '');
          firstProgress();
        },
        timeout: 60_000,
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(json(result).reply.content).toBe(fakeAnswerTo(question));
      expect(progress.length).toBeGreaterThan(1);
      expect(progress.join('')).toBe(fakeAnswerTo(question));
    } finally {
      model.beforeLastChunk = undefined;
    }
    const history = json(await call(owner, 'get_agent_history', { agentId }));
    expect(history.messages.map((m: { content: string }) => m.content)).toContain(fakeAnswerTo(question));
  }, 90_000);

  it('writes and reads memory, through the tools and the memory resource', async () => {
    const written = await call(owner, 'write_memory', { agentId, key: 'favourite_venue', value: { city: 'Bristol', name: 'The Fleece' } });
    expect(written.isError).toBeFalsy();
    expect(json(written)).toMatchObject({ success: true, key: 'favourite_venue' });
    const bulk = await call(owner, 'write_memory', { agentId, values: { set_length: 90, genre: 'deep house' } });
    expect(json(bulk)).toMatchObject({ success: true, keysUpdated: 2 });
    const read = json(await call(owner, 'read_memory', { agentId }));
    expect(read.memory).toEqual({ favourite_venue: { city: 'Bristol', name: 'The Fleece' }, set_length: 90, genre: 'deep house' });

    const { resources } = await owner.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining([`agent://${agentId}/memory`, `agent://${agentId}/log`]));
    const resource = await owner.readResource({ uri: `agent://${agentId}/memory` });
    const [content] = resource.contents as { text: string }[];
    expect(JSON.parse(content!.text).memory.genre).toBe('deep house');
  });

  it('reads usage, metered by the chat as POST /api/chat meters it', async () => {
    const result = await call(owner, 'get_usage');
    expect(result.isError).toBeFalsy();
    const { usage } = json(result);
    expect(usage).toBeTypeOf('object');
    expect(JSON.stringify(usage)).toContain(agentId);
  });

  it('an API key of another account cannot see or touch the agent through any tool or resource', async () => {
    const listed = json(await call(other, 'list_agents'));
    expect(listed.agents.map((a: { id: string }) => a.id)).not.toContain(agentId);
    const attempts: [string, Record<string, unknown>][] = [
      ['get_agent', { agentId }],
      ['update_agent_config', { agentId, config: { systemPrompt: 'Obey me.' } }],
      ['chat_with_agent', { agentId, message: 'Tell me your secrets.' }],
      ['get_agent_history', { agentId }],
      ['read_memory', { agentId }],
      ['write_memory', { agentId, key: 'favourite_venue', value: 'overwritten' }],
      ['list_installed_skills', { agentId }],
      ['install_skill', { agentId, skillId: 'setlist-oracle' }],
      ['get_agent_log', { agentId }],
      ['get_budget', { agentId }],
      ['set_budget', { agentId, monthlyCapUsd: 1 }],
      ['list_schedules', { agentId }],
      ['create_schedule', { agentId, at: new Date(Date.now() + 3_600_000).toISOString(), prompt: 'Leak the memory.' }],
    ];
    for (const [name, args] of attempts) {
      const result = await call(other, name, args);
      expect(result.isError, name).toBe(true);
      expect([402, 403, 404], name).toContain(json(result).httpStatus);
      expect(JSON.stringify(result), name).not.toContain('The Fleece');
    }
    // The instance tools act on the caller's own account, never on another's.
    expect(json(await call(other, 'get_instance')).httpStatus).toBe(404);
    await expect(other.readResource({ uri: `agent://${agentId}/memory` })).rejects.toThrow();
    // Nothing of the owner's changed.
    expect(json(await call(owner, 'read_memory', { agentId })).memory.favourite_venue).toEqual({ city: 'Bristol', name: 'The Fleece' });
    expect(json(await call(owner, 'get_instance'))).toMatchObject({ status: 'running' });
  }, 60_000);

  it('refuses a missing or bad token with 401 and the link to the protected-resource metadata', async () => {
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const metadata = `${base}/.well-known/oauth-protected-resource/mcp`;
    for (const authorization of [undefined, 'Bearer sk_not_a_real_key_0000000000000000000000', 'Bearer not-a-token']) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(message),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}"`);
    }
    const client = new Client({ name: 'mcp-e2e-anonymous', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base)))).rejects.toThrow(/AUTH_REQUIRED/);
  });

  it('OAuth end to end: discovery, registration, PKCE through the console consent page in a browser, a tool call, refresh, revocation, then 401', async () => {
    // Discovery, as a client starts: the 401's link, then the two metadata documents.
    const refused = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')![1]!;
    const resourceMetadata = (await (await fetch(metadataUrl)).json()) as any;
    expect(resourceMetadata).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base], bearer_methods_supported: ['header'] });
    expect(await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()).toEqual(resourceMetadata);
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as any;
    expect(server).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });

    // The SDK's own client runs the rest: registration (RFC 7591), PKCE, the redirect to the consent page.
    const auth = new ConnectorAuth();
    const connector = new Client({ name: 'mcp-e2e-connector', version: '1.0.0' });
    const firstTry = new StreamableHTTPClientTransport(new URL('/mcp', base), { authProvider: auth });
    await expect(connector.connect(firstTry)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(auth.client?.client_id).toMatch(/^mcpc_/);
    const asked = auth.authorizationUrl!;
    expect(asked.origin + asked.pathname).toBe(`${base}/oauth/authorize`);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('resource')).toBe(`${base}/mcp`);

    // A person signs in and allows the connector in a real browser; the browser comes back with the code.
    browser = await launchChromium();
    const page = await (await browser.newContext({ baseURL: base })).newPage();
    let callback: URL | undefined;
    await page.route(`${CALLBACK}**`, (route) => {
      callback = new URL(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'connected' });
    });
    await page.goto(asked.href);
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Connect E2E connector?' }).waitFor();
    const requested = await page.getByRole('list', { name: 'Requested access' }).textContent();
    // The SDK asks for every scope the resource metadata offers.
    for (const scope of ['read', 'agents', 'billing']) expect(requested).toContain(scope);
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.waitForURL(`${CALLBACK}**`);
    expect(callback!.searchParams.get('state')).toBe(asked.searchParams.get('state'));
    const code = callback!.searchParams.get('code')!;

    // Token (the SDK's exchange with the verifier), then a tool call with it.
    await firstTry.finishAuth(code);
    expect(auth.saved).toMatchObject({ token_type: 'Bearer', scope: 'read agents billing' });
    await connector.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { authProvider: auth }));
    clients.push(connector);
    const listed = json(await call(connector, 'list_agents'));
    expect(listed.agents.map((a: { id: string }) => a.id)).toContain(agentId);
    const toolNames = (await connector.listTools()).tools.map((t) => t.name);
    expect(toolNames).toEqual(expect.arrayContaining(['provision_agent', 'get_usage']));
    // The token is the MCP server's alone: the API's routes do not take it.
    expect((await fetch(`${base}/api/agents/${agentId}`, { headers: { authorization: `Bearer ${auth.saved!.access_token}` } })).status).toBe(401);

    // The console lists the connection.
    await page.goto('/settings');
    await page.getByRole('button', { name: 'Revoke E2E connector' }).waitFor();

    // Refresh, narrowed to read: the refresh token rotates (the old one stops) and the new token reads only.
    const tokenEndpoint = server.token_endpoint as string;
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const oldRefresh = auth.saved!.refresh_token!;
    const refreshed = await fetch(
      tokenEndpoint,
      form({ grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: auth.client!.client_id, scope: 'read' }),
    );
    expect(refreshed.status).toBe(200);
    const tokens = (await refreshed.json()) as OAuthTokens;
    expect(tokens.scope).toBe('read');
    expect(tokens.refresh_token).not.toBe(oldRefresh);
    const reused = await fetch(tokenEndpoint, form({ grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: auth.client!.client_id }));
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
    const reader = await connect(tokens.access_token);
    const readTools = (await reader.listTools()).tools;
    expect(readTools.length).toBeGreaterThan(5);
    expect(readTools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect((await call(reader, 'provision_agent', { name: 'not allowed' })).isError).toBe(true);

    // Revocation (RFC 7009) ends the grant: the access token answers 401, and so does refreshing.
    const revoked = await fetch(server.revocation_endpoint, form({ token: tokens.refresh_token!, client_id: auth.client!.client_id }));
    expect(revoked.status).toBe(200);
    const after = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    await page.goto('/settings');
    await page.getByText('No connected clients.').waitFor();
  }, 120_000);

  it('answers GET and DELETE with 405, as a stateless server does', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { authorization: `Bearer ${keys.owner}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});
