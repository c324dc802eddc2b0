import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpVerified, startLocalStack, type LocalStack } from '../helpers/local-stack';
import WebSocket from 'ws';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import * as keys from '#data/keys';
import { accountSession, type TestSession } from '../helpers/api';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The agents end to end, over real HTTP against `npm start`: as an admin, provision an
 * agent, see it become running, open its websocket with its token and get an answer (from a fake
 * model provider on loopback), stop and start it, and read its stats.
 */

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function converse(url: string, content: string): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const frames: any[] = [];
    ws.on('message', (d) => {
      const frame = JSON.parse(d.toString());
      frames.push(frame);
      if (frame.type === 'ready') ws.send(JSON.stringify({ type: 'message', content, id: 'q1' }));
      else {
        ws.close();
        resolve(frames);
      }
    });
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('agents on the local stack (npm start)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-agents-e2e-'));
  let stack: LocalStack;
  let base: string;
  let model: FakeModelServer;
  let admin: TestSession;
  let agentId: string;

  const api = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${admin.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const instanceStatus = async () => (await api('GET', `/api/instance/${admin.userId}`)).body.status as string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAILS: 'admin@example.com',
      MODEL_API_BASE_URL: model.baseUrl,
      MODEL_API_KEY: 'sk-e2e-provider-key',
      PROVISION_HEALTH_INTERVAL_MS: '250',
    });
    base = await stack.ready;
    // The stack has its own database: the admin signs up there and proves the address from the outbox.
    admin = (await signUpVerified(base, dataDir, 'admin@example.com')) as TestSession;
  }, 90_000);

  afterAll(async () => {
    if (stack?.child.exitCode === null) {
      stack.child.kill('SIGTERM');
      await new Promise((r) => stack.child.once('exit', r));
    }
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('provisions an agent as an admin (no subscription needed) and sees it become running', async () => {
    const res = await api('POST', '/api/agents/provision', { name: 'E2E booking agent' });
    expect(res.status).toBe(201);
    expect(res.body.agent.status).toBe('provisioning');
    agentId = res.body.agent.id;
    const agent = await until(async () => {
      const a = (await api('GET', `/api/agents/${agentId}`)).body.agent;
      return a.status === 'running' ? a : undefined;
    }, 'the agent to run');
    // Through the edge on the stack's own port, at the account's subdomain.
    expect(agent.websocketUrl).toBe(`ws://${agent.subdomain}.agents.localhost:${new URL(base).port}/agents/${agentId}`);
    expect(agent.plan).toBe('network');
  }, 90_000);

  it('opens the websocket with the token from /token and gets an answer from the model provider', async () => {
    const { token } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
    expect(token).toMatch(/^gw_/);
    const { websocketUrl } = (await api('GET', `/api/agents/${agentId}`)).body.agent;
    const frames = await converse(`${websocketUrl}?token=${token}`, 'Can you play Bristol on the 14th?');
    expect(frames[0]).toMatchObject({ type: 'ready', agentId });
    expect(frames[1]).toMatchObject({ type: 'message', role: 'assistant', content: fakeAnswerTo('Can you play Bristol on the 14th?'), replyTo: 'q1' });
    expect(model.requests.at(-1)!.authorization).toBe('Bearer sk-e2e-provider-key');
    const history = (await api('GET', `/api/agents/${agentId}/messages?limit=10`)).body;
    expect(history.total).toBe(2);
  }, 60_000);

  it('serves live stats from the running instance', async () => {
    const stats = (await api('GET', `/api/agents/${agentId}/stats`)).body;
    expect(stats.status).toBe('ok');
    expect(stats.stats.cpu).toMatch(/^\d+\.\d{2}%$/);
    expect(stats.stats.memory).toMatch(/^[\d.]+\w+ \/ [\d.]+\w+$/);
    expect(stats.stats.uptime).toBeGreaterThan(0);
    expect(Number(stats.stats.pids)).toBeGreaterThan(0);
    const instance = (await api('GET', `/api/instance/${admin.userId}/stats`)).body;
    expect(instance).toMatchObject({ userId: admin.userId, status: 'running', plan: 'network' });
  });

  it('stops and starts the instance; the conversation survives the restart', async () => {
    const { websocketUrl: before } = (await api('GET', `/api/agents/${agentId}`)).body.agent;
    expect(await api('POST', `/api/instance/${admin.userId}/stop`)).toMatchObject({
      status: 200,
      body: { success: true, status: 'stopped', current: 'stopped' },
    });
    expect(await instanceStatus()).toBe('stopped');
    expect((await api('GET', `/api/agents/${agentId}`)).body.agent.status).toBe('stopped');
    // The process goes away: the edge answers for it that it is stopped, and how to start it.
    const { token: stoppedToken } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
    const throughEdge = await fetch(`${before.replace('ws://', 'http://')}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stoppedToken}` },
      body: '{}',
    });
    expect(throughEdge.status).toBe(409);
    expect(await throughEdge.json()).toMatchObject({ code: 'INSTANCE_STOPPED', error: expect.stringContaining(`/api/instance/${admin.userId}/start`) });

    // Spec 3: stop, start and restart apply from any state. A second stop changes nothing and succeeds;
    // a start then a restart at once both answer 200, the restart superseding the start's launch.
    expect(await api('POST', `/api/instance/${admin.userId}/stop`)).toMatchObject({
      status: 200,
      body: { success: true, status: 'stopped', current: 'stopped' },
    });
    expect(await api('POST', `/api/instance/${admin.userId}/start`)).toMatchObject({
      status: 200,
      body: { success: true, status: 'running', current: 'provisioning' },
    });
    expect(await api('POST', `/api/instance/${admin.userId}/restart`)).toMatchObject({ status: 200, body: { success: true, status: 'running' } });
    const waited = await api('GET', `/api/instance/${admin.userId}?waitFor=running&timeout=25`);
    expect(waited.body).toMatchObject({ status: 'running', reached: true });
    const { events } = (await api('GET', `/api/instance/${admin.userId}/events?limit=100`)).body;
    // Whether the start's launch began (its `launching` is a write of its own) before the restart landed
    // varies; the story does not: the restart is requested, supersedes the start, and ends running.
    const story = events.slice(-6) as { type: string; op?: string }[];
    const requested = story.findIndex((e) => e.type === 'instance.requested' && e.op === 'restart');
    expect(requested, JSON.stringify(story)).toBeGreaterThanOrEqual(0);
    expect(story.map((e) => e.type)).toContain('instance.superseded');
    expect(story.slice(requested).map((e) => e.type)).toContain('instance.launching');
    expect(events.at(-1)).toMatchObject({ type: 'instance.running', op: 'restart' });

    const { token } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
    const { websocketUrl } = (await api('GET', `/api/agents/${agentId}`)).body.agent;
    await converse(`${websocketUrl}?token=${token}`, 'And the 15th?');
    const sent = model.requests.at(-1)!.body.messages;
    expect(sent.map((m) => m.content)).toContain('Can you play Bristol on the 14th?');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'And the 15th?' });
  }, 90_000);

  it('stops the runtime processes it started when it stops', async () => {
    const { token } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
    const { websocketUrl } = (await api('GET', `/api/agents/${agentId}`)).body.agent;
    const open = new WebSocket(`${websocketUrl}?token=${token}`);
    await new Promise((r) => open.once('open', r));
    // Where the runtime itself listens: its registered address, read from the stack's own table.
    const dynamoEndpoint = /DynamoDB Local at (http:\/\/127\.0\.0\.1:\d+)/.exec(stack.output().stderr)![1]!;
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    const instance = (await ddb.send(new GetCommand({ TableName: 'agent-platform', Key: keys.instance(admin.userId), ConsistentRead: true }))).Item!;
    ddb.destroy();
    expect(instance.handle.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const edgeClosed = new Promise<number>((r) => open.once('close', (code) => r(code)));
    stack.child.kill('SIGTERM');
    expect(await new Promise((r) => stack.child.once('exit', r))).toBe(0);
    expect(await edgeClosed).toBe(1012);
    await expect(fetch(`${instance.handle.endpoint}/livez`)).rejects.toThrow();
    await expect(fetch(websocketUrl.replace('ws://', 'http://'))).rejects.toThrow();
  }, 30_000);
});

describe('a launch that keeps failing on the local stack', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-agents-dlq-'));
  let stack: LocalStack;
  let base: string;

  beforeAll(async () => {
    // A runtime entry that does not exist: every launch fails, as a launcher without capacity would.
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAILS: 'admin@example.com',
      LOCAL_RUNTIME_ENTRY: path.join(dataDir, 'no-such-runtime.ts'),
    });
    base = await stack.ready;
  }, 90_000);

  afterAll(async () => {
    if (stack?.child.exitCode === null) {
      stack.child.kill('SIGTERM');
      await new Promise((r) => stack.child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is retried, parked in the DLQ after 3 receives, and then the agent and the instance are error', async () => {
    const admin = await accountSession({ admin: true });
    const headers = { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' };
    const res = await fetch(`${base}/api/agents/provision`, { method: 'POST', headers, body: JSON.stringify({ name: 'Doomed' }) });
    expect(res.status).toBe(201);
    const { id } = ((await res.json()) as any).agent;
    const agent = await until(
      async () => {
        const a = ((await (await fetch(`${base}/api/agents/${id}`, { headers })).json()) as any).agent;
        return a.status === 'error' ? a : undefined;
      },
      'the agent to fail',
      80_000,
    );
    expect(agent.status).toBe('error');
    expect(stack.output().stderr.match(/SQS will redeliver it/g)?.length).toBe(3);
    expect(stack.output().stderr).toContain('given up after every retry');
    const instance = (await (await fetch(`${base}/api/instance/${admin.userId}`, { headers })).json()) as any;
    expect(instance.status).toBe('error');
  }, 120_000);
});
