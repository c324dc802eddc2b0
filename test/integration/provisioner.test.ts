import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dlqHandler, handler } from '#functions/workers/provisioner/handler';
import { handler as taskEvents } from '#functions/workers/task-events/handler';
import { readOutbox } from '#adapters/email';
import { LaunchError } from '#adapters/launcher';
import { reloadConfig } from '#platform/config';
import { agentQuotaUsed, createAgent } from '#data/agents';
import { ensureInstance, gatewayToken, getInstance, recordOnGeneration } from '#data/instances';
import * as keys from '#data/keys';
import { onMetrics, type EmfDocument } from '#platform/metrics';
import { tenant } from '#data/tenant';
import { call, accountSession, uniqueIp, type TestSession } from '../helpers/api';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { chat, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const MODEL_KEY = 'sk-provider-key-that-must-stay-on-the-platform';
const bed = useAgentsTestBed({ MODEL_API_KEY: MODEL_KEY, PROVISION_HEALTH_ATTEMPTS: '150' });

afterEach(() => {
  bed.launcher.failWith(undefined);
  reloadConfig({ LOCAL_RUNTIME_ENTRY: undefined, PROVISION_HEALTH_ATTEMPTS: '150' });
});

async function provisioned(session?: TestSession, plan = 'collective') {
  const user = session ?? (await accountSession());
  if (!session) await subscribe(user.userId, plan);
  const res = await call('POST', '/api/agents/provision', { session: user, body: { name: 'Booking bot' }, ip: uniqueIp() });
  expect(res.status).toBe(201);
  const message = { kind: 'agent', userId: user.userId, agentId: res.body.agent.id as string, ownerEmail: user.email };
  return { user, agentId: message.agentId, message };
}

const agentOf = async (user: TestSession, agentId: string) => (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;

describe('provisioner', () => {
  it('10 concurrent deliveries of one message launch one instance; the agent becomes running', async () => {
    const { user, agentId, message } = await provisioned();
    const emitted: EmfDocument[] = [];
    const stopListening = onMetrics((emf) => emitted.push(emf));
    const results = await Promise.all(Array.from({ length: 10 }, () => handler(sqsEvent(sqsRecord(message))))).finally(stopListening);
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(1);
    // One launch, one provision that succeeded, as business metrics.
    const total = (name: string) => emitted.reduce((sum, emf) => sum + Number(emf[name] ?? 0), 0);
    expect([total('InstanceLaunches'), total('ProvisionsSucceeded'), total('ProvisionsFailed')]).toEqual([1, 1, 0]);
    const failed = results.filter((r) => r.batchItemFailures.length > 0).length;
    expect(failed).toBeLessThan(10);

    const agent = await agentOf(user, agentId);
    expect(agent.status).toBe('running');
    expect(agent.websocketUrl).toBe(`ws://${agent.subdomain}.agents.localhost:${bed.edge.port}/agents/${agentId}`);
    expect(agent.startedAt).not.toBeNull();

    // SQS redelivers the ones reported busy, and duplicates keep coming: all are acknowledged, no new launch.
    const again = await Promise.all(Array.from({ length: failed + 2 }, () => handler(sqsEvent(sqsRecord(message)))));
    expect(again.every((r) => r.batchItemFailures.length === 0)).toBe(true);
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(1);
  });

  it('one batch with the same message ten times launches once and reports only the busy copies', async () => {
    const { user, agentId, message } = await provisioned();
    const records = Array.from({ length: 10 }, () => sqsRecord(message));
    const out = await handler(sqsEvent(...records));
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(1);
    expect(out.batchItemFailures.length).toBe(9);
    expect((await agentOf(user, agentId)).status).toBe('running');
  });

  it('reports a poison message alone in batchItemFailures', async () => {
    const { user, agentId, message } = await provisioned();
    const good = sqsRecord(message);
    const notJson = sqsRecord('{"kind": "agent", ');
    const wrongShape = sqsRecord({ kind: 'agent', userId: user.userId });
    const unknownKind = sqsRecord({ kind: 'format-disk', userId: user.userId });
    const out = await handler(sqsEvent(notJson, good, wrongShape, unknownKind));
    expect(out.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([notJson.messageId, wrongShape.messageId, unknownKind.messageId].sort());
    expect((await agentOf(user, agentId)).status).toBe('running');
    // In the DLQ the poison is dropped without harm.
    expect(await dlqHandler(sqsEvent(notJson))).toEqual({ batchItemFailures: [] });
  });

  it('a second agent joins the running instance without a second launch', async () => {
    const first = await provisioned();
    await handler(sqsEvent(sqsRecord(first.message)));
    const second = await provisioned(first.user);
    const out = await handler(sqsEvent(sqsRecord(second.message)));
    expect(out.batchItemFailures).toEqual([]);
    expect(bed.launcher.launchesFor(first.user.userId)).toHaveLength(1);
    expect((await agentOf(first.user, second.agentId)).status).toBe('running');
    const instance = await getInstance(first.user.userId, true);
    expect(instance?.readyAgents).toBe(2);
  });

  it('a launch failure is retried; after the DLQ the agent is error, the quota is back and a later agent relaunches', async () => {
    const { user, agentId, message } = await provisioned(undefined, 'label');
    bed.launcher.failWith(new LaunchError('RunTask failed: RESOURCE:MEMORY'));
    const record = sqsRecord(message);
    for (let delivery = 1; delivery <= 3; delivery += 1) {
      expect((await handler(sqsEvent(record))).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    }
    expect((await agentOf(user, agentId)).status).toBe('provisioning');
    expect(await agentQuotaUsed(user.userId)).toBe(1);

    expect(await dlqHandler(sqsEvent(record))).toEqual({ batchItemFailures: [] });
    const failed = await agentOf(user, agentId);
    expect(failed.status).toBe('error');
    expect(await agentQuotaUsed(user.userId)).toBe(0);
    expect((await getInstance(user.userId, true))?.status).toBe('error');
    // The reason is the launcher's own words, on the agent, the instance, the event log, and in one email.
    const reason = 'the launch failed on every attempt; last error: RunTask failed: RESOURCE:MEMORY';
    expect(failed.failureReason).toBe(reason);
    expect((await call('GET', `/api/instance/${user.userId}`, { session: user })).body.failureReason).toBe(reason);
    const events = (await call('GET', `/api/instance/${user.userId}/events`, { session: user })).body.events as { type: string; reason?: string }[];
    expect(events.filter((e) => e.type === 'instance.error').map((e) => e.reason)).toEqual([reason]);
    // The DLQ may deliver twice: nothing moves a second time, and no second email.
    await dlqHandler(sqsEvent(record));
    expect(await agentQuotaUsed(user.userId)).toBe(0);
    const mails = await readOutbox(user.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Your agent could not start');
    expect(mails[0]!.text).toContain('RunTask failed: RESOURCE:MEMORY');

    bed.launcher.failWith(undefined);
    const next = await provisioned(user);
    expect((await handler(sqsEvent(sqsRecord(next.message)))).batchItemFailures).toEqual([]);
    expect((await agentOf(user, next.agentId)).status).toBe('running');
    expect((await agentOf(user, agentId)).status).toBe('error');
  });

  it('an instance that never answers its health check becomes error, is stopped, and the quota is released', async () => {
    const entry = path.join(tmpdir(), `never-healthy-${process.pid}.mjs`);
    writeFileSync(
      entry,
      [
        "import http from 'node:http';",
        "const s = http.createServer((q, r) => { r.writeHead(503, {'content-type': 'application/json'}); r.end('{\"status\":\"starting\"}'); });",
        "s.listen(0, '127.0.0.1', () => console.log(`listening ${s.address().port}`));",
        "process.on('SIGTERM', () => process.exit(0));",
      ].join('\n'),
    );
    reloadConfig({ LOCAL_RUNTIME_ENTRY: entry, PROVISION_HEALTH_ATTEMPTS: '3' });
    const { user, agentId, message } = await provisioned(undefined, 'label');
    expect((await handler(sqsEvent(sqsRecord(message)))).batchItemFailures).toEqual([]);
    const instance = await getInstance(user.userId, true);
    expect(instance?.status).toBe('error');
    expect(instance?.lastError).toMatch(/health check/);
    expect((await agentOf(user, agentId)).status).toBe('error');
    expect(await agentQuotaUsed(user.userId)).toBe(0);
    const launched = bed.launcher.launchesFor(user.userId);
    expect(launched).toHaveLength(1);
    expect(bed.launcher.stops.some((h) => h.id === instance?.handle?.id)).toBe(true);
  });

  it('passes the runtime its gateway token and the platform URL, never platform secrets', async () => {
    const { user, message } = await provisioned();
    await handler(sqsEvent(sqsRecord(message)));
    const pid = (await getInstance(user.userId, true))!.handle!.id;
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const names = env.map((e) => e.split('=')[0]);
    expect(env).toContain(`GATEWAY_TOKEN=${await gatewayToken(user.userId)}`);
    expect(env).toContain(`PLATFORM_URL=${bed.platform.url}`);
    expect(env).toContain(`INSTANCE_USER_ID=${user.userId}`);
    for (const secret of ['JWT_SECRET', 'MODEL_API_KEY', 'MODEL_API_BASE_URL', 'DYNAMODB_ENDPOINT', 'KMS_KEY_ID', 'LOCAL_MASTER_KEY_FILE'])
      expect(names).not.toContain(secret);
    expect(env.join('\n')).not.toContain(MODEL_KEY);
  });

  it('the agent answers over its websocket with the token from /token, through the platform model layer', async () => {
    const { user, agentId, message } = await provisioned();
    await handler(sqsEvent(sqsRecord(message)));
    const { token } = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body;
    const { websocketUrl } = await agentOf(user, agentId);
    // The edge in front refuses a token that is not the account's.
    await expect(chat(`${websocketUrl}?token=wrong`, 'hi')).rejects.toThrow('403');
    const answer = await chat(`${websocketUrl}?token=${token}`, 'Is the 14th free?');
    expect(answer).toMatchObject({ type: 'message', role: 'assistant', content: fakeAnswerTo('Is the 14th free?'), agentId });
    const sent = bed.model.requests.at(-1)!;
    expect(sent.authorization).toBe(`Bearer ${MODEL_KEY}`);
    expect(sent.body.model).toBe('openai/gpt-4o-mini');
    const messages = await call('GET', `/api/agents/${agentId}/messages`, { session: user });
    expect(messages.body.total).toBe(2);
    expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual(['assistant', 'user']);
  });
});

describe('ECS task state events', () => {
  it('a STOPPED event for the task being launched fails the instance and its waiting agents, releasing their quota', async () => {
    const user = await accountSession();
    const agent = await createAgent(user.userId, { name: 'x', model: 'openai/gpt-4o-mini', config: {}, source: 'api' }, 3);
    const { instance } = await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1', jobOwner: `agent-${agent.id}` });
    const taskArn = `arn:aws:ecs:us-east-1:1:task/cluster/${agent.id}`;
    await recordOnGeneration(user.userId, instance.generation, { handle: { launcher: 'ecs', id: taskArn, generation: instance.generation } });
    const event = (detail: Record<string, unknown>) =>
      ({ id: 'e', 'detail-type': 'ECS Task State Change', source: 'aws.ecs', detail }) as unknown as Parameters<typeof taskEvents>[0];

    // Events of other tasks, other generations or foreign groups change nothing.
    await taskEvents(event({ taskArn, lastStatus: 'STOPPED', group: 'service:other', startedBy: 'gen-1' }));
    await taskEvents(event({ taskArn, lastStatus: 'STOPPED', group: `agent-platform:${user.userId}`, startedBy: 'gen-7' }));
    expect((await getInstance(user.userId, true))?.status).toBe('provisioning');

    await taskEvents(
      event({ taskArn, lastStatus: 'STOPPED', group: `agent-platform:${user.userId}`, startedBy: 'gen-1', stoppedReason: 'CannotPullContainerError' }),
    );
    const after = await getInstance(user.userId, true);
    expect(after?.status).toBe('error');
    expect(after?.lastError).toContain('CannotPullContainerError');
    const stored = await tenant(user.userId).get<{ phase: string }>(keys.agent(user.userId, agent.id));
    expect(stored?.phase).toBe('error');
    expect(await agentQuotaUsed(user.userId)).toBe(0);
  });
});
