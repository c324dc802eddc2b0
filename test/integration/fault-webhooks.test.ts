import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_SQS_ENDPOINT_FILE, replayDeadLetters } from '#local/dead-letters';
import { createQueueWithDlq } from '#local/emulators';
import { pollQueue } from '#local/workers';
import { handler as webhookDelivery } from '#functions/workers/webhook-delivery/handler';
import { readOutbox } from '#adapters/email';
import { sqs } from '#adapters/queue';
import { config, reloadConfig } from '#platform/config';
import { emitAccountEvent } from '#adapters/events-queue';
import { accountSession, call, type TestSession } from '../helpers/api';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { until } from '../helpers/local-stack';

/**
 * Webhook delivery that outlives a receiver's outage. The events go through a
 * queue of this file's own in the SQS emulator, drained by the local stack's poller into the real
 * delivery worker, on a retry schedule shortened through WEBHOOK_RETRY_SCHEDULE_MS.
 */

const previousQueue = config().eventsQueueUrl;
let queues: { queueUrl: string; dlqUrl: string };
let poller: ReturnType<typeof pollQueue>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  queues = await createQueueWithDlq(await sqs(), `fault-webhooks-${randomUUID().slice(0, 8)}`);
  reloadConfig({ EVENTS_QUEUE_URL: queues.queueUrl });
  poller = pollQueue(queues.queueUrl, webhookDelivery);
  receiver = await startWebhookReceiver();
});
afterEach(() => reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: undefined, WEBHOOK_DISABLE_AFTER_MS: undefined }));
afterAll(async () => {
  await poller.stop();
  await receiver.close();
  reloadConfig({ EVENTS_QUEUE_URL: previousQueue });
});

async function endpointFor(owner: TestSession) {
  const created = await call('POST', '/api/webhooks/endpoints', { session: owner, body: { url: receiver.url, events: ['instance.*'] } });
  expect(created.status).toBe(201);
  return created.body as { endpoint: { id: string }; secret: string };
}

const emit = (userId: string, type = 'instance.running') =>
  emitAccountEvent(userId, {
    id: `evt_${randomUUID().replaceAll('-', '')}`,
    type: type as 'instance.running',
    timestamp: new Date().toISOString(),
    data: { userId },
  });

const deliveries = async (owner: TestSession, endpointId: string) =>
  (await call('GET', `/api/webhooks/endpoints/${endpointId}/deliveries?limit=100`, { session: owner })).body.deliveries as Record<string, unknown>[];

const receivedIds = () => receiver.received.map((r) => r.headers['webhook-id'] as string);

/** Nothing ready, in flight or delayed on the queue: no later attempt can still come. */
async function queueSettled(): Promise<true | undefined> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
  const a = (await (await sqs()).send(new GetQueueAttributesCommand({ QueueUrl: queues.queueUrl, AttributeNames: [...names] }))).Attributes ?? {};
  return names.every((n) => Number(a[n] ?? 0) === 0) ? true : undefined;
}

describe('webhook delivery that outlives outages', () => {
  it('delivers an event once its receiver returns from an outage longer than the early retries, once per webhook-id, signed', async () => {
    reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '1000,1000,1000,2000,4000,8000' });
    const owner = await accountSession();
    const { endpoint, secret } = await endpointFor(owner);
    await receiver.down();
    const outageStarted = Date.now();
    const events = [await emit(owner.userId), await emit(owner.userId, 'instance.stopped')];

    // Three attempts per event fail while the receiver is down, each naming when the next one is due.
    const failed = await until(async () => {
      const log = await deliveries(owner, endpoint.id);
      return events.every((e) => log.filter((d) => d.eventId === e.id && d.outcome === 'failed').length >= 3) ? log : undefined;
    }, 'three failed attempts per event');
    expect(failed.every((d) => d.statusCode === undefined && typeof d.error === 'string' && typeof d.nextAttemptAt === 'string')).toBe(true);
    expect(receiver.received).toHaveLength(0);

    await receiver.up();
    const back = Date.now();
    await until(async () => (events.every((e) => receivedIds().includes(e.id)) ? true : undefined), 'the deliveries after the outage', 20_000);
    const deliveredAfterMs = Date.now() - back;
    await until(queueSettled, 'the retry chain to end', 20_000);
    process.stderr.write(`[fault-webhooks] receiver down ${back - outageStarted} ms; both events delivered ${deliveredAfterMs} ms after it returned\n`);

    expect(receivedIds().sort()).toEqual(events.map((e) => e.id).sort());
    for (const hook of receiver.received) {
      const verified = new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as { id: string; data: { userId: string } };
      expect(verified.data.userId).toBe(owner.userId);
    }
    const log = await deliveries(owner, endpoint.id);
    for (const event of events) {
      const attempts = log.filter((d) => d.eventId === event.id);
      const [last, ...earlier] = attempts;
      expect(last).toMatchObject({ outcome: 'delivered', statusCode: 204, attempt: attempts.length });
      expect(last!.nextAttemptAt).toBeUndefined();
      expect(earlier.every((d) => d.outcome === 'failed')).toBe(true);
    }
    const listed = (await call('GET', '/api/webhooks/endpoints', { session: owner })).body.endpoints;
    expect(listed).toEqual([expect.objectContaining({ id: endpoint.id, enabled: true })]);
    expect(listed[0].failingSince).toBeUndefined();
  });

  it('redelivers one event on its owner’s request with the same webhook-id, and to nobody else', async () => {
    const owner = await accountSession();
    const intruder = await accountSession();
    const { endpoint, secret } = await endpointFor(owner);
    const event = await emit(owner.userId);
    await until(async () => (receivedIds().includes(event.id) ? true : undefined), 'the first delivery');

    const path = `/api/webhooks/endpoints/${endpoint.id}/deliveries/${event.id}/redeliver`;
    expect((await call('POST', path, { session: intruder })).status).toBe(404);
    expect((await call('POST', `/api/webhooks/endpoints/${endpoint.id}/deliveries/evt_never_sent/redeliver`, { session: owner })).status).toBe(404);
    const asked = await call('POST', path, { session: owner });
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({ success: true, endpointId: endpoint.id, eventId: event.id });

    await until(async () => (receivedIds().filter((id) => id === event.id).length === 2 ? true : undefined), 'the redelivery');
    const copies = receiver.received.filter((r) => r.headers['webhook-id'] === event.id);
    expect(copies[1]!.body).toBe(copies[0]!.body);
    expect(new Webhook(secret).verify(copies[1]!.body, copies[1]!.headers as Record<string, string>)).toMatchObject({ id: event.id });
    // The log entry is written after the receiver answered: waited for, not raced.
    const log = await until(async () => {
      const entries = (await deliveries(owner, endpoint.id)).filter((d) => d.eventId === event.id);
      return entries.length === 2 ? entries : undefined;
    }, 'the redelivery in the log');
    expect(log).toEqual([
      expect.objectContaining({ attempt: 2, outcome: 'delivered', manual: true }),
      expect.objectContaining({ attempt: 1, outcome: 'delivered' }),
    ]);
    expect(log[1]!.manual).toBeUndefined();
  });

  it('disables an endpoint that fails for the whole (shortened) window, mails its owner once, and sends to it again once re-enabled', async () => {
    reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '1000,1000,1000,1000,1000,1000', WEBHOOK_DISABLE_AFTER_MS: '2500' });
    const owner = await accountSession();
    const { endpoint } = await endpointFor(owner);
    receiver.setStatus(503);
    try {
      const first = await emit(owner.userId);
      const disabled = await until(async () => {
        const [listed] = (await call('GET', '/api/webhooks/endpoints', { session: owner })).body.endpoints;
        return listed.enabled === false ? listed : undefined;
      }, 'the endpoint to be disabled');
      expect(disabled).toMatchObject({ id: endpoint.id, disabledReason: expect.stringMatching(/failed/), disabledAt: expect.any(String) });
      await until(queueSettled, 'the remaining retries to be dropped', 20_000);
      const attemptsAtDisable = (await deliveries(owner, endpoint.id)).length;
      expect(attemptsAtDisable).toBeLessThan(7);

      const mail = await readOutbox(owner.email);
      expect(mail).toHaveLength(1);
      expect(mail[0]).toMatchObject({ subject: 'A webhook endpoint was disabled' });
      expect(mail[0]!.text).toContain(`PATCH /api/webhooks/endpoints/${endpoint.id}`);
      expect(mail[0]!.text).not.toContain(receiver.url);

      // Disabled: a new event is not attempted, and the owner cannot redeliver to it.
      await emit(owner.userId);
      await until(queueSettled, 'the new event to be handled');
      expect(await deliveries(owner, endpoint.id)).toHaveLength(attemptsAtDisable);
      const refused = await call('POST', `/api/webhooks/endpoints/${endpoint.id}/deliveries/${first.id}/redeliver`, { session: owner });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('ENDPOINT_DISABLED');

      receiver.setStatus(204);
      const enabled = await call('PATCH', `/api/webhooks/endpoints/${endpoint.id}`, { session: owner, body: { enabled: true } });
      expect(enabled.status).toBe(200);
      expect(enabled.body.endpoint).toMatchObject({ id: endpoint.id, enabled: true });
      expect(enabled.body.endpoint.failingSince).toBeUndefined();
      const after = await emit(owner.userId);
      await until(async () => (receivedIds().includes(after.id) ? true : undefined), 'a delivery to the re-enabled endpoint');
      expect(await readOutbox(owner.email)).toHaveLength(1);
    } finally {
      receiver.setStatus(204);
    }
  });
});

describe('dead-letter replay (npm run replay-dlq)', () => {
  const bodiesOn = async (queueUrl: string) => {
    const bodies: string[] = [];
    for (;;) {
      const out = await (await sqs()).send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 60 }),
      );
      if (!out.Messages?.length) return bodies.sort();
      bodies.push(...out.Messages.map((m) => m.Body!));
    }
  };

  it('moves every dead letter back onto its queue, and a dry run moves nothing', async () => {
    const replay = await createQueueWithDlq(await sqs(), `replay-${randomUUID().slice(0, 8)}`);
    const bodies = Array.from({ length: 13 }, (_, i) => JSON.stringify({ id: `evt_dead_${i}` })).sort();
    for (const body of bodies) await (await sqs()).send(new SendMessageCommand({ QueueUrl: replay.dlqUrl, MessageBody: body }));

    const lines: string[] = [];
    const dry = await replayDeadLetters(await sqs(), replay.queueUrl, { dryRun: true, progress: (l) => lines.push(l) });
    expect(dry).toMatchObject({ deadLetterQueueUrl: replay.dlqUrl, waiting: 13, moved: 0 });
    expect(lines.join('\n')).toContain('dry run');

    const done = await replayDeadLetters(await sqs(), replay.queueUrl, { progress: (l) => lines.push(l) });
    expect(done).toMatchObject({ waiting: 13, moved: 13 });
    expect(lines.at(-1)).toBe('done: 13 message(s) replayed, 0 left in the dead-letter queue');
    expect(await bodiesOn(replay.queueUrl)).toEqual(bodies);
    expect(await bodiesOn(replay.dlqUrl)).toEqual([]);
  });

  it('runs as a command against the local stack’s emulator (--local reads the endpoint npm start wrote)', async () => {
    const replay = await createQueueWithDlq(await sqs(), `replay-cli-${randomUUID().slice(0, 8)}`);
    await (await sqs()).send(new SendMessageCommand({ QueueUrl: replay.dlqUrl, MessageBody: '{"id":"evt_cli_1"}' }));
    await (await sqs()).send(new SendMessageCommand({ QueueUrl: replay.dlqUrl, MessageBody: '{"id":"evt_cli_2"}' }));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'replay-dlq-'));
    // The endpoint must come from the file --local reads, not from this process's settings.
    const { SQS_ENDPOINT: _fromSettings, ...withoutSqsEndpoint } = process.env;
    writeFileSync(path.join(dataDir, LOCAL_SQS_ENDPOINT_FILE), `${config().sqsEndpoint}\n`);
    try {
      const run = (...args: string[]) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'bin/replay-dlq.ts', ...args], {
            env: { ...withoutSqsEndpoint, DATA_DIR: dataDir },
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d));
          child.stderr.on('data', (d: Buffer) => (stderr += d));
          child.on('exit', (code) => resolve({ code, stdout, stderr }));
        });
      const dry = await run('--local', '--queue-url', replay.queueUrl, '--dry-run');
      expect(dry.code).toBe(0);
      expect(JSON.parse(dry.stdout)).toMatchObject({ waiting: 2, moved: 0 });
      const moved = await run('--local', '--queue-url', replay.queueUrl);
      expect(moved.code).toBe(0);
      expect(JSON.parse(moved.stdout)).toMatchObject({ waiting: 2, moved: 2 });
      expect(moved.stderr).toContain('moved 2 of 2');
      expect(await bodiesOn(replay.queueUrl)).toEqual(['{"id":"evt_cli_1"}', '{"id":"evt_cli_2"}']);
      const bad = await run('--queue', 'nope');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--queue must be one of events, provisioning');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
