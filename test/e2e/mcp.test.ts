import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { signUpVerified, startLocalStack, stopLocalStack, type LocalStack } from '../helpers/local-stack';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The remote MCP server against `npm start`, driven by the official MCP SDK client over Streamable
 * HTTP with an `sk_` API key, as Claude, Cursor or VS Code would drive it.
 */

const OWNER = 'mcp-owner@example.com';
const OTHER = 'mcp-other@example.com';

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

  it('answers GET and DELETE with 405, as a stateless server does', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { authorization: `Bearer ${keys.owner}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});
