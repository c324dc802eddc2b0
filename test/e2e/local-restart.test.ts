import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import * as keys from '#data/keys';
import { testSession, type TestSession } from '../helpers/api';
import { freeLoopbackPort, startLocalStack, type LocalStack, stopLocalStack, until } from '../helpers/local-stack';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The local stack keeps stored state true to what runs: after Ctrl-C and `npm start` an agent that
 * was running runs again, on the same websocket URL; a runtime process that dies is relaunched.
 */

/** Opens the agent's websocket with the token in the subprotocol and returns its first frame. */
function firstFrame(url: string, token: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['agent-runtime', `bearer.${token}`]);
    ws.once('message', (d) => {
      ws.close();
      resolve(JSON.parse(d.toString()));
    });
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('the local stack reconciles instances with the processes that run', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-restart-e2e-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_EMAILS: 'admin@example.com',
    HEARTBEAT_TICK_MS: '500',
  };
  let stack: LocalStack;
  let base: string;
  let admin: TestSession;
  let agentId: string;
  let websocketUrl: string;

  const api = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${admin.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const runningAgent = async () => {
    const agent = (await api('GET', `/api/agents/${agentId}`)).body.agent;
    return agent?.status === 'running' ? agent : undefined;
  };

  beforeAll(async () => {
    admin = await testSession({ admin: true });
    // The agents' URLs carry the stack's port (its edge): the same one after the restart.
    env.PORT = String(await freeLoopbackPort());
    stack = startLocalStack(env);
    base = await stack.ready;
  }, 90_000);

  afterAll(() => stopLocalStack(stack, dataDir));

  it('an agent running before Ctrl-C runs again after npm start, on the same websocket URL', async () => {
    const provisioned = await api('POST', '/api/agents/provision', { name: 'survives restarts' });
    expect(provisioned.status).toBe(201);
    agentId = provisioned.body.agent.id;
    websocketUrl = (await until(runningAgent, 'the agent to run', 90_000)).websocketUrl;
    const { token } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
    expect(await firstFrame(websocketUrl, token)).toMatchObject({ type: 'ready', agentId });

    stack.ctrlC();
    expect(await stack.exited()).toBe(0);
    stack = startLocalStack(env);
    base = await stack.ready;
    const readyAt = Date.now();
    const again = await until(runningAgent, `the agent to run again after the restart; stack said: ${stack.output().stderr.slice(-3000)}`, 90_000);
    // Seconds on an idle laptop; the bound leaves room for a heavily loaded two-core test machine.
    expect(Date.now() - readyAt).toBeLessThan(60_000);
    expect(again.websocketUrl).toBe(websocketUrl);
    expect(await firstFrame(websocketUrl, token)).toMatchObject({ type: 'ready', agentId });
    expect(stack.output().stderr).toContain('relaunching 1 instance(s)');
  }, 240_000);

  it('a runtime process that dies is relaunched within seconds, on the same websocket URL, with the signal in the event log', async () => {
    const dynamoEndpoint = /DynamoDB Local at (http:\/\/127\.0\.0\.1:\d+)/.exec(stack.output().stderr)![1]!;
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
    const readInstance = async () =>
      (await ddb.send(new GetCommand({ TableName: 'agent-platform', Key: keys.instance(admin.userId), ConsistentRead: true }))).Item!;
    try {
      const item = await readInstance();
      expect(item.status).toBe('running');
      process.kill(Number(item.handle.id), 'SIGKILL');
      const killedAt = Date.now();
      const relaunched = await until(
        async () => {
          const now = await readInstance();
          return now.status === 'running' && now.handle?.id !== item.handle.id ? now : undefined;
        },
        'the dead instance to run again',
        30_000,
      );
      const relaunchMs = Date.now() - killedAt;
      console.info(`local-restart: a SIGKILLed runtime ran again ${relaunchMs} ms after the kill`);
      expect(relaunched.generation).toBe(item.generation + 1);
      // The first relaunch waits the first pause of INSTANCE_RELAUNCH_BACKOFF_SECONDS, then a runtime start; room for a loaded two-core machine.
      expect(relaunchMs).toBeLessThan(20_000);
      const { events } = (await api('GET', `/api/instance/${admin.userId}/events?limit=100`)).body;
      const healing = (events as { cause: string; type: string; reason?: string }[]).filter((e) => e.cause === 'self-heal');
      expect(healing.map((e) => e.type)).toEqual(['instance.unhealthy', 'instance.requested']);
      expect(healing[0]!.reason).toContain('signal SIGKILL');
      const { token } = (await api('GET', `/api/instance/${admin.userId}/token`)).body;
      expect(await firstFrame(websocketUrl, token)).toMatchObject({ type: 'ready', agentId });
    } finally {
      ddb.destroy();
    }
  }, 60_000);
});
