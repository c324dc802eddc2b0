import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerApi, signUpVerified, startLocalStack, stopLocalStack, until, type LocalStack } from '../helpers/local-stack';
import { closeCodeOf, converseThroughEdge, edgeRequest, edgeWebsocket, refusedUpgrade } from '../helpers/edge-client';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * The agent edge on `npm start`: each agent is reached at http://<subdomain>.agents.localhost:<port>
 * on the stack's one port, by Host, with its account's gateway token; the API hands out exactly
 * those addresses; the stack stopping closes the websockets it carries with 1012.
 */

interface Account {
  userId: string;
  token: string;
  agentId: string;
  gatewayToken: string;
  url: string;
  websocketUrl: string;
}

/** The smoke test's address: an admin of this stack, so its throwaway account may provision. */
const SMOKE_EMAIL = 'smoke@example.com';

/** `npm run smoke -- <args>` as a child process, as an operator runs it. */
function runSmoke(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const root = path.resolve(import.meta.dirname, '../..');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'bin/smoke.ts', ...args],
      { cwd: root, timeout: 150_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the agent edge on the local stack', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-edge-e2e-'));
  let stack: LocalStack;
  let base = '';
  let port = 0;
  let model: FakeModelServer;
  const a = {} as Account;
  const b = {} as Account;

  async function provisioned(account: Account, email: string) {
    Object.assign(account, await signUpVerified(base, dataDir, email));
    const api = bearerApi(
      () => base,
      () => account.token,
    );
    const res = await api('POST', '/api/agents/provision', { name: `Edge agent of ${email}` });
    expect(res.status).toBe(201);
    account.agentId = res.body.agent.id;
    account.websocketUrl = res.body.agent.websocketUrl;
    await until(
      async () => ((await api('GET', `/api/agents/${account.agentId}`)).body.agent.status === 'running' ? true : undefined),
      'the agent to run',
      90_000,
    );
    account.gatewayToken = (await api('GET', `/api/instance/${account.userId}/token`)).body.token;
    account.url = (await api('GET', `/api/instance/${account.userId}`)).body.url;
    return api;
  }
  let apiA: ReturnType<typeof bearerApi>;

  beforeAll(async () => {
    model = await startFakeModelServer();
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAILS: `edge-a@example.com,edge-b@example.com,${SMOKE_EMAIL}`,
      MODEL_API_BASE_URL: model.baseUrl,
      MODEL_API_KEY: 'sk-e2e-provider-key',
      PROVISION_HEALTH_INTERVAL_MS: '250',
      LOG_LEVEL: 'INFO',
    });
    base = await stack.ready;
    port = Number(new URL(base).port);
    apiA = await provisioned(a, 'edge-a@example.com');
    await provisioned(b, 'edge-b@example.com');
  }, 180_000);

  afterAll(async () => {
    await stopLocalStack(stack, dataDir);
    await model?.close();
  });

  it('hands out the edge addresses: http://<subdomain>.agents.localhost:<port> and its ws:// form', async () => {
    const agent = (await apiA('GET', `/api/agents/${a.agentId}`)).body.agent;
    const origin = `http://${agent.subdomain}.agents.localhost:${port}`;
    expect(agent.url).toBe(origin);
    expect(a.url).toBe(origin);
    expect(agent.websocketUrl).toBe(`ws://${agent.subdomain}.agents.localhost:${port}/agents/${a.agentId}`);
    expect(a.websocketUrl).toBe(agent.websocketUrl);
    const listed = (await apiA('GET', '/api/agents')).body.agents.find((x: { id: string }) => x.id === a.agentId);
    expect(listed.websocketUrl).toBe(agent.websocketUrl);
  });

  it('forwards an HTTP call with the Bearer token to the agent', async () => {
    const res = await edgeRequest(`${a.url}/agents/${a.agentId}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.gatewayToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Through the edge?' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.content).toBe(fakeAnswerTo('Through the edge?'));
    expect(res.headers['transfer-encoding'] ?? '').not.toMatch(/,/);
  }, 30_000);

  it('streams an answer over server-sent events, with ?token=', async () => {
    const res = await edgeRequest(`${a.url}/agents/${a.agentId}/chat?token=${a.gatewayToken}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Stream it', stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.text).toMatch(/event: delta/);
    const done = /event: done\ndata: (.*)\n/.exec(res.text);
    expect(JSON.parse(done![1]!).content).toBe(fakeAnswerTo('Stream it'));
  }, 30_000);

  it('carries a websocket chat with the subprotocol pair (browsers) and with ?token=', async () => {
    const paired = edgeWebsocket(a.websocketUrl, ['agent-runtime', `bearer.${a.gatewayToken}`]);
    const frames = await converseThroughEdge(paired, 'Paired protocols');
    expect(paired.protocol).toBe('agent-runtime');
    expect(frames[0]).toMatchObject({ type: 'ready', agentId: a.agentId });
    expect(frames.at(-1)).toMatchObject({ role: 'assistant', content: fakeAnswerTo('Paired protocols'), replyTo: 'q1' });
    paired.close();
    const queried = edgeWebsocket(`${a.websocketUrl}?token=${a.gatewayToken}`);
    expect((await converseThroughEdge(queried, 'Query token')).at(-1)).toMatchObject({ content: fakeAnswerTo('Query token') });
    queried.close();
  }, 30_000);

  it('refuses a missing token (401), a wrong one and another agent’s (403), for HTTP and upgrades alike', async () => {
    const chat = (headers: Record<string, string>, url = a.url) =>
      edgeRequest(`${url}/agents/${a.agentId}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"content":"hi"}' });
    const before = model.requests.length;
    expect(await chat({})).toMatchObject({ status: 401, body: { code: 'TOKEN_REQUIRED' } });
    expect(await chat({ authorization: 'Bearer gw_not-the-token' })).toMatchObject({ status: 403, body: { code: 'TOKEN_INVALID' } });
    expect(await chat({ authorization: `Bearer ${b.gatewayToken}` })).toMatchObject({ status: 403, body: { code: 'TOKEN_INVALID' } });
    expect(await refusedUpgrade(edgeWebsocket(a.websocketUrl))).toMatchObject({ status: 401 });
    expect(await refusedUpgrade(edgeWebsocket(a.websocketUrl, ['agent-runtime', `bearer.${b.gatewayToken}`]))).toMatchObject({ status: 403 });
    expect(await refusedUpgrade(edgeWebsocket(`${a.websocketUrl}?token=${b.gatewayToken}`))).toMatchObject({ status: 403 });
    // B's own token opens B's agent, not A's.
    expect((await edgeRequest(`${b.url}/health`, { headers: { authorization: `Bearer ${b.gatewayToken}` } })).status).toBe(200);
    expect(model.requests.length).toBe(before);
  }, 30_000);

  it('answers 404 for a subdomain no instance has', async () => {
    const res = await edgeRequest(`http://agent-0000000000000000.agents.localhost:${port}/health`, { headers: { authorization: `Bearer ${a.gatewayToken}` } });
    expect(res).toMatchObject({ status: 404, body: { code: 'AGENT_NOT_FOUND' } });
  });

  it('never logs the token it was given', async () => {
    await edgeRequest(`${a.url}/health?token=${a.gatewayToken}`);
    const { stdout, stderr } = stack.output();
    expect(`${stdout}${stderr}`).toMatch(/"message":"edge request"[^\n]*"target":"\/health"/);
    expect(`${stdout}${stderr}`).not.toContain(a.gatewayToken);
  });

  it('routes a relaunched instance at its new address', async () => {
    const before = await edgeRequest(`${a.url}/health`, { headers: { authorization: `Bearer ${a.gatewayToken}` } });
    expect(before.status).toBe(200);
    const restartedAt = Date.now();
    expect((await apiA('POST', `/api/instance/${a.userId}/restart`)).status).toBe(200);
    expect((await apiA('GET', `/api/instance/${a.userId}?waitFor=running&timeout=25`)).body).toMatchObject({ status: 'running', reached: true });
    const started = Date.now();
    const after = await until(async () => {
      const res = await edgeRequest(`${a.url}/health`, { headers: { authorization: `Bearer ${a.gatewayToken}` } });
      return res.status === 200 ? res : undefined;
    }, 'the relaunched instance through the edge');
    expect(Date.now() - started).toBeLessThan(2000);
    // A new process answers: it started after the restart was asked for.
    expect(after.body.uptimeMs).toBeLessThanOrEqual(Date.now() - restartedAt);
  }, 60_000);

  it('npm run smoke passes against the stack, a real chat included, and removes all it created', async () => {
    const modelCallsBefore = model.requests.length;
    const run = await runSmoke([
      '--url',
      base,
      '--sign-up',
      '--email',
      SMOKE_EMAIL,
      '--confirm-from',
      `outbox:${path.join(dataDir, 'outbox')}`,
      '--webhook-url',
      'local',
      '--timeout',
      '90',
      '--json',
    ]);
    expect(run.stderr, run.stdout).toMatch(/^verdict: PASS/m);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.verdict).toBe('pass');
    expect(report.steps.map((s: { name: string; outcome: string }) => `${s.name}: ${s.outcome}`)).toEqual(
      [
        'health',
        'OpenAPI document',
        'sign-up',
        'confirm the address',
        'webhook endpoint',
        'provision to running',
        'chat',
        'agent URL through the edge',
        'websocket through the edge',
        'signed webhook delivered',
        'delete the webhook endpoint',
        'delete the agent',
        'stop the instance',
        'delete the account',
      ].map((name) => `${name}: pass`),
    );
    const detail = (name: string) => report.steps.find((s: { name: string }) => s.name === name).detail;
    // The chat and the websocket were answered by the model, not by a stand-in.
    expect(detail('chat')).toContain('fake answer to: This is the post-deploy smoke test');
    expect(detail('websocket through the edge')).toContain('fake answer to:');
    expect(model.requests.length).toBeGreaterThanOrEqual(modelCallsBefore + 2);
    expect(detail('signed webhook delivered')).toMatch(/signature verified/);
    // Nothing is left: the agent's address reaches no instance, and the address is free again.
    expect(report.created.agent.url).toMatch(/^http:\/\/agent-[0-9a-f]+\.agents\.localhost:\d+$/);
    const afterwards = await edgeRequest(`${report.created.agent.url}/health`, { headers: { authorization: `Bearer ${a.gatewayToken}` } });
    expect(afterwards).toMatchObject({ status: 404, body: { code: 'AGENT_NOT_FOUND' } });
    const again = await fetch(`${base}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: SMOKE_EMAIL, password: 'correct-horse-battery' }),
    });
    expect(again.status).toBe(201);
  }, 180_000);

  it('npm run smoke fails with the reason when the account may not provision, and still deletes the account', async () => {
    const run = await runSmoke(['--url', base, '--sign-up', '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.verdict).toBe('fail');
    const outcome = Object.fromEntries(report.steps.map((s: { name: string; outcome: string }) => [s.name, s.outcome]));
    expect(outcome).toMatchObject({ 'sign-up': 'pass', 'provision to running': 'fail', chat: 'skip', 'delete the account': 'pass' });
    expect(report.steps.find((s: { name: string }) => s.name === 'provision to running').error).toMatch(/SUBSCRIPTION_REQUIRED.*adminEmails/);
    expect(run.stderr).toMatch(/FAIL {2}provision to running/);
    const again = await fetch(`${base}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: report.created.account.email, password: 'correct-horse-battery' }),
    });
    expect(again.status).toBe(201);
  }, 60_000);

  it('closes the websockets it carries with 1012 when the stack stops', async () => {
    const ws = edgeWebsocket(a.websocketUrl, ['agent-runtime', `bearer.${a.gatewayToken}`]);
    await converseThroughEdge(ws, 'Still there?');
    const code = closeCodeOf(ws);
    stack.child.kill('SIGTERM');
    expect(await code).toBe(1012);
    expect(await stack.exited()).toBe(0);
  }, 30_000);
});
