import { afterAll, beforeAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { reloadConfig } from '#platform/config';
import { startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { loadGroupHandler } from '#local/handlers';
import { createLocalServer } from '#local/server';
import { setLauncher, type Launcher, type LaunchSpec } from '#adapters/launcher';
import { localLauncher } from '#adapters/launcher-local';
import { sqs } from '#adapters/queue';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import type { LaunchHandle } from '#adapters/launcher';
import { createEdgeServer } from '#edge/server';

/** Shared by the agents, provisioner, lifecycle and provision integration tests. */

export async function subscribe(userId: string, plan = 'solo', status = 'active') {
  await tenant(userId).put({ ...keys.subscription(userId), status, plan, eventCreated: Date.now(), updatedAt: new Date().toISOString() });
}

/**
 * The platform's HTTP API on loopback (the same router and handlers as the local stack), for the
 * runtime processes the local launcher starts: they load their state and reach the model layer here.
 */
export async function startPlatform() {
  const server = createLocalServer(loadGroupHandler, () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * The real local launcher, counted: every launch still starts a real runtime process. `failNext`
 * makes launches throw as a launcher without capacity would (ECS RunTask failures).
 */
export function countingLauncher() {
  const real = localLauncher();
  const launches: LaunchSpec[] = [];
  const stops: LaunchHandle[] = [];
  const started: { userId: string; handle: LaunchHandle }[] = [];
  const state = { fail: undefined as Error | undefined, broken: new Set<string>() };
  const wrapped: Launcher = {
    name: 'local',
    async launch(spec) {
      launches.push(spec);
      if (state.fail) throw state.fail;
      // An image whose container starts but never serves: its address refuses every connection.
      if (state.broken.has(spec.image)) return { launcher: 'local', id: `broken-${launches.length}`, endpoint: 'http://127.0.0.1:9' };
      const handle = await real.launch(spec);
      started.push({ userId: spec.userId, handle });
      return handle;
    },
    locate: async (h) => (h.id.startsWith('broken-') ? { state: 'running', handle: h } : real.locate(h)),
    async stop(h, reason) {
      stops.push(h);
      await real.stop(h, reason);
    },
  };
  setLauncher(wrapped);
  return {
    launches,
    stops,
    launchesFor: (userId: string) => launches.filter((l) => l.userId === userId),
    /** The runtime processes of `userId` still running (each distinct process once). */
    async aliveFor(userId: string): Promise<LaunchHandle[]> {
      const mine = [...new Map(started.filter((s) => s.userId === userId).map((s) => [s.handle.id, s.handle])).values()];
      const located = await Promise.all(mine.map((h) => real.locate(h)));
      return mine.filter((_h, i) => located[i]!.state === 'running');
    },
    failWith(err: Error | undefined) {
      state.fail = err;
    },
    breakImage(image: string | undefined) {
      state.broken = new Set(image ? [image] : []);
    },
    async restore() {
      setLauncher(undefined);
      await real.stopAll();
    },
  };
}

export function sqsRecord(body: unknown, messageId = randomUUID()): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'test', ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:provisioning',
    awsRegion: 'local',
  };
}

export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** A queue of this test file's own, so no other test consumes or adds to its messages. */
export async function privateQueue(): Promise<string> {
  const out = await (await sqs()).send(new CreateQueueCommand({ QueueName: `prov-test-${randomUUID().slice(0, 8)}` }));
  return out.QueueUrl!;
}

export async function drain(queueUrl: string): Promise<unknown[]> {
  const bodies: unknown[] = [];
  for (;;) {
    const out = await (await sqs()).send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 300 }),
    );
    if (!out.Messages?.length) return bodies;
    bodies.push(...out.Messages.map((m) => JSON.parse(m.Body!)));
  }
}

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * One exchange over an agent's websocket: waits for `ready`, sends `content`, resolves with the
 * first answer; an upgrade the runtime refuses rejects with its status code.
 */
export function chat(url: string, content: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.type === 'ready') return ws.send(JSON.stringify({ type: 'message', content }));
      ws.close();
      resolve(m);
    });
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/**
 * The agent edge on loopback, as the local stack mounts it: the agents' URLs the API hands out
 * (LOCAL_EDGE_PORT) lead through it to the runtimes.
 */
export async function startEdge() {
  const edge = createEdgeServer({ agentDomain: 'agents.localhost', behindLoadBalancer: false });
  await new Promise<void>((r) => edge.server.listen(0, '127.0.0.1', r));
  return { ...edge, port: (edge.server.address() as AddressInfo).port };
}

/**
 * The set-up every agents test file shares: the platform served on loopback (so runtimes reach it),
 * the agent edge in front of the runtimes, a fake model provider, a private provisioning queue and
 * the counting launcher. Settings given here are applied on top, and every setting it touched is
 * restored after the file.
 */
export function useAgentsTestBed(settings: Record<string, string> = {}) {
  const bed = {} as {
    platform: Awaited<ReturnType<typeof startPlatform>>;
    edge: Awaited<ReturnType<typeof startEdge>>;
    model: FakeModelServer;
    launcher: ReturnType<typeof countingLauncher>;
    queueUrl: string;
  };
  const saved = { ...process.env };
  let touched: string[] = [];
  beforeAll(async () => {
    [bed.platform, bed.edge, bed.model, bed.queueUrl] = await Promise.all([startPlatform(), startEdge(), startFakeModelServer(), privateQueue()]);
    const applied = {
      PROVISIONING_QUEUE_URL: bed.queueUrl,
      RUNTIME_PLATFORM_URL: bed.platform.url,
      MODEL_API_BASE_URL: bed.model.baseUrl,
      PROVISION_HEALTH_INTERVAL_MS: '200',
      LOCAL_EDGE_PORT: String(bed.edge.port),
      ...settings,
    };
    touched = Object.keys(applied);
    reloadConfig(applied);
    bed.launcher = countingLauncher();
  });
  afterAll(async () => {
    await bed.launcher.restore();
    await Promise.all([bed.platform.close(), bed.edge.close(), bed.model.close()]);
    reloadConfig(Object.fromEntries(touched.map((k) => [k, saved[k]])));
  });
  return bed;
}

/**
 * A subscriber whose agent runs on a local instance: provisioned through the API, the provisioning
 * message handled, and the agent reported running. Needs `useAgentsTestBed` in the file.
 */
export async function runningAgent(bed: { queueUrl: string }, plan = 'solo') {
  const [{ handler }, { accountSession, call, uniqueIp }] = await Promise.all([import('#functions/workers/provisioner/handler'), import('../helpers/api')]);
  const user = await accountSession();
  await subscribe(user.userId, plan);
  const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Chat bot' }, ip: uniqueIp() });
  if (res.status !== 201) throw new Error(`could not provision an agent: ${res.status} ${res.text}`);
  const agentId = res.body.agent.id as string;
  const messages = await drain(bed.queueUrl);
  const { batchItemFailures } = await handler(sqsEvent(...messages.map((m) => sqsRecord(m))));
  if (batchItemFailures.length) throw new Error(`the provisioner failed: ${JSON.stringify(batchItemFailures)}`);
  await waitFor(async () => (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent?.status === 'running', 'the agent running');
  return { user, agentId };
}

/** Hands the provisioning messages of `queueUrl` to the provisioner until `done` says the work is over. */
export async function pumpProvisioningUntil(queueUrl: string, done: () => Promise<boolean>) {
  const { handler } = await import('#functions/workers/provisioner/handler');
  await waitFor(async () => {
    const messages = await drain(queueUrl);
    if (messages.length) await handler(sqsEvent(...messages.map((m) => sqsRecord(m))));
    return done();
  }, 'the provisioner to settle');
}

/**
 * What the minute sweep's idle stop does (functions/workers/heartbeat/idle-stop.ts), for one account, then
 * waits until its runtime process is gone. Used by the wake tests and the wake bench.
 */
export async function idleStopInstance(bed: { queueUrl: string; launcher: ReturnType<typeof countingLauncher> }, userId: string) {
  const [{ getInstance, transitionInstance }, { requestProvisioning }] = await Promise.all([import('#data/instances'), import('#adapters/provisioning-queue')]);
  const instance = await getInstance(userId, true);
  if (instance?.status !== 'running') throw new Error(`cannot idle-stop an instance that is ${instance?.status ?? 'missing'}`);
  const { changed, after } = await transitionInstance(userId, 'stop', {
    cause: 'idle',
    stopReason: 'idle',
    expect: { generation: instance.generation, status: 'running' },
    jobOwner: (g) => `gen-${g}`,
  });
  if (!changed) throw new Error('the idle stop lost a race');
  await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'stop' });
  await pumpProvisioningUntil(bed.queueUrl, async () => (await bed.launcher.aliveFor(userId)).length === 0);
}
