import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { handler as taskEvents } from '#functions/workers/task-events/handler';
import { RUNTIME_PORT, setLauncher } from '#adapters/launcher';
import { ecsLauncher, resetEcsClient } from '#adapters/launcher-ecs';
import { kms } from '#platform/aws/kms-client';
import { reloadConfig } from '#platform/config';
import { gatewayToken, getInstance } from '#data/instances';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { type FakeEcs, startFakeEcs } from '../helpers/fake-ecs';
import { drain, privateQueue, sqsEvent, sqsRecord, subscribe, waitFor } from './agents-helpers';

/**
 * A killed runtime in AWS: an ECS task-state event `STOPPED` for the task of a running instance
 * relaunches it through the ECS launcher (RunTask on a loopback ECS speaking JSON 1.1), recorded
 * with the stoppedReason; past the hourly bound the instance is `error` with it; the STOPPED event
 * of a task the owner stopped changes nothing.
 */

const STOPPED_REASON = 'Essential container in task exited';
const SETTINGS = [
  'ECS_ENDPOINT',
  'KMS_ENDPOINT',
  'KMS_KEY_ID',
  'ECS_CLUSTER_ARN',
  'ECS_TASK_DEFINITION_ARN',
  'ECS_SUBNET_IDS',
  'ECS_SECURITY_GROUP_IDS',
  'PROVISIONING_QUEUE_URL',
  'PROVISION_HEALTH_INTERVAL_MS',
  'INSTANCE_RELAUNCH_BACKOFF_SECONDS',
  'INSTANCE_RELAUNCHES_PER_HOUR',
] as const;
const saved = Object.fromEntries(SETTINGS.map((k) => [k, process.env[k]]));

let ecs: FakeEcs;
let queueUrl: string;
/** The task's runtime as ECS would expose it: a health endpoint on the task's address and the runtime port. */
let runtime: http.Server;
let taskIp: string;
const healthyTokens = new Set<string>();

async function listenOnFreeLoopbackAddress(server: http.Server): Promise<string> {
  for (let host = 2; host < 40; host += 1) {
    const ip = `127.0.20.${host}`;
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(RUNTIME_PORT, ip, () => resolve(true));
    });
    if (bound) return ip;
  }
  throw new Error(`no free loopback address for port ${RUNTIME_PORT}`);
}

beforeAll(async () => {
  runtime = http.createServer((req, res) => {
    const ok = req.url === '/health' && healthyTokens.has(String(req.headers.authorization).replace(/^Bearer /, ''));
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { status: 'ok' } : { error: 'unauthorized' }));
  });
  taskIp = await listenOnFreeLoopbackAddress(runtime);
  [ecs, queueUrl] = await Promise.all([startFakeEcs(taskIp), privateQueue()]);
  reloadConfig({
    ECS_ENDPOINT: ecs.endpoint,
    KMS_ENDPOINT: ecs.endpoint,
    KMS_KEY_ID: 'alias/agent-platform',
    ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/agents',
    ECS_TASK_DEFINITION_ARN: 'arn:aws:ecs:us-east-1:123456789012:task-definition/runtime:1',
    ECS_SUBNET_IDS: 'subnet-a',
    ECS_SECURITY_GROUP_IDS: 'sg-runtime',
    PROVISIONING_QUEUE_URL: queueUrl,
    PROVISION_HEALTH_INTERVAL_MS: '100',
    INSTANCE_RELAUNCH_BACKOFF_SECONDS: '0',
    INSTANCE_RELAUNCHES_PER_HOUR: '1',
  });
  // Clients an earlier file of this worker built point elsewhere: these must reach the fake.
  resetEcsClient();
  kms.reset();
  setLauncher(ecsLauncher());
});

afterAll(async () => {
  setLauncher(undefined);
  reloadConfig(saved);
  resetEcsClient();
  kms.reset();
  await Promise.all([ecs.close(), new Promise((r) => runtime.close(r))]);
});

async function runQueued(): Promise<unknown[]> {
  const messages = await waitFor(async () => {
    const found = await drain(queueUrl);
    return found.length ? found : undefined;
  }, 'a queued provisioning message');
  const out = await provisioner(sqsEvent(...messages.map((m) => sqsRecord(m))));
  expect(out.batchItemFailures).toEqual([]);
  return messages;
}

const stateChange = (detail: Record<string, unknown>) =>
  ({ id: 'e', 'detail-type': 'ECS Task State Change', source: 'aws.ecs', detail }) as unknown as Parameters<typeof taskEvents>[0];

/** ECS stops the task (its container exited) and sends the task-state event, as EventBridge delivers it. */
async function taskStops(user: TestSession, reason = STOPPED_REASON) {
  const instance = (await getInstance(user.userId, true))!;
  const task = ecs.tasks.get(instance.handle!.id)!;
  Object.assign(task, { lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stoppedReason: reason });
  await taskEvents(
    stateChange({ taskArn: task.taskArn, lastStatus: 'STOPPED', group: task.group, startedBy: task.startedBy, stoppedReason: reason, attachments: [] }),
  );
  return { instance, task };
}

async function runningOnEcs(): Promise<TestSession> {
  const user = await accountSession();
  await subscribe(user.userId);
  healthyTokens.add(await gatewayToken(user.userId));
  expect((await call('POST', '/api/agents/provision', { session: user, body: { name: 'Ecs bot' }, ip: uniqueIp() })).status).toBe(201);
  await runQueued();
  const instance = (await getInstance(user.userId, true))!;
  expect(instance).toMatchObject({ status: 'running', handle: { launcher: 'ecs', endpoint: `http://${taskIp}:${RUNTIME_PORT}` } });
  return user;
}

describe('an ECS task that stops under a running instance', { timeout: 60_000 }, () => {
  it('is relaunched through RunTask with the stoppedReason recorded; past the hourly bound the instance is error with it', async () => {
    const user = await runningOnEcs();
    const { instance, task } = await taskStops(user);
    expect(await getInstance(user.userId, true)).toMatchObject({ status: 'provisioning', op: 'restart', generation: instance.generation + 1 });
    const healing = (await listLifecycleEvents(user.userId, 100)).events.filter((e) => e.cause === 'self-heal');
    expect(healing.map((e) => e.type)).toEqual(['instance.unhealthy', 'instance.requested']);
    expect(healing[0]!.reason).toContain(STOPPED_REASON);

    expect(await runQueued()).toEqual([{ kind: 'lifecycle', userId: user.userId, generation: instance.generation + 1, op: 'restart' }]);
    const relaunched = (await getInstance(user.userId, true))!;
    expect(relaunched.status).toBe('running');
    expect(relaunched.handle!.id).not.toBe(task.taskArn);
    const runTasks = ecs.calls.filter((c) => c.operation === 'RunTask' && c.input.group === `agent-platform:${user.userId}`);
    expect(runTasks.map((c) => c.input.startedBy)).toEqual([`gen-${instance.generation}`, `gen-${instance.generation + 1}`]);
    expect(new Set(runTasks.map((c) => c.input.clientToken)).size).toBe(2);

    // The bound is one relaunch an hour: the next stop leaves it in error with the reason, nothing queued.
    await taskStops(user, 'OutOfMemoryError: Container killed due to memory usage');
    const failed = (await getInstance(user.userId, true))!;
    expect(failed.status).toBe('error');
    expect(failed.lastError).toContain('OutOfMemoryError');
    expect(await drain(queueUrl)).toEqual([]);
    expect((await call('GET', `/api/instance/${user.userId}`, { session: user, ip: uniqueIp() })).body).toMatchObject({
      status: 'error',
      failureReason: failed.lastError,
    });
  });

  it('the STOPPED event of a task the owner stopped changes nothing', async () => {
    const user = await runningOnEcs();
    const before = (await getInstance(user.userId, true))!;
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    await runQueued();
    const task = ecs.tasks.get(before.handle!.id)!;
    expect(task.lastStatus).toBe('STOPPED');
    await taskEvents(
      stateChange({ taskArn: task.taskArn, lastStatus: 'STOPPED', group: task.group, startedBy: task.startedBy, stoppedReason: task.stoppedReason }),
    );
    expect((await getInstance(user.userId, true))?.status).toBe('stopped');
    expect(await drain(queueUrl)).toEqual([]);
    expect((await listLifecycleEvents(user.userId, 100)).events.filter((e) => e.cause === 'self-heal')).toEqual([]);
  });
});
