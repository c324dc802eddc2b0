import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, DeleteMessageCommand, DeleteQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_TIMEOUT_MS } from '#functions/workers/webhook-delivery/deliver';
import { handler } from '#functions/workers/webhook-delivery/handler';
import { assertPublicHttpsUrl } from '#adapters/url-guard';
import { sqs } from '#adapters/queue';
import { reloadConfig } from '#platform/config';
import { call } from '../helpers/api';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { signUp } from './accounts-helpers';

const SECRET = `whsec_${Buffer.from('events-test-signing-key-0123456789').toString('base64')}`;
const sharedQueue = process.env.EVENTS_QUEUE_URL;
let queueUrl: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

/** This file's own events queue, so other suites' events never mix in. */
beforeAll(async () => {
  const out = await (await sqs()).send(new CreateQueueCommand({ QueueName: `events-test-${randomUUID().slice(0, 8)}` }));
  queueUrl = out.QueueUrl!;
  receiver = await startWebhookReceiver();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.setStatus(204);
  reloadConfig({ STAGE: 'test', EVENTS_QUEUE_URL: sharedQueue, WEBHOOK_ENDPOINTS: undefined, WEBHOOK_SECRET: undefined, WEBHOOK_RETRY_SCHEDULE_MS: undefined });
});
afterAll(async () => {
  await receiver.close();
  await (await sqs()).send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
});

/** Retries are due at once here, so a drained retry can be handed straight to the handler. */
const configure = (endpoints: string[]) =>
  reloadConfig({
    EVENTS_QUEUE_URL: queueUrl,
    WEBHOOK_ENDPOINTS: endpoints.join(','),
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_RETRY_SCHEDULE_MS: '0,0',
    FORGOT_PASSWORD_MIN_MS: '0',
  });

/**
 * Everything on this file's queue right now, as the SQS event source would hand it to the Lambda.
 * The messages are taken off the queue; redeliveries are built by hand where a test needs one.
 */
async function drain(): Promise<SQSEvent> {
  const records: SQSRecord[] = [];
  for (let i = 0; i < 5; i++) {
    const out = await (await sqs()).send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: records.length ? 0 : 1,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (!messages.length) break;
    for (const m of messages) {
      records.push(sqsRecord(m.Body!, m.MessageId!, m.Attributes?.ApproximateReceiveCount ?? '1'));
      await (await sqs()).send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
    }
  }
  return { Records: records };
}

function sqsRecord(body: string, messageId: string = randomUUID(), receiveCount = '1'): SQSRecord {
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: {
      ApproximateReceiveCount: receiveCount,
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:events',
    awsRegion: 'us-east-1',
  };
}

const verified = (hook: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(SECRET).verify(hook.body, hook.headers as Record<string, string>) as { id: string; type: string; data: Record<string, unknown> };

describe('webhook events (spec 6)', () => {
  it('delivers user.created, user.updated and user.deleted, each signed with the Standard Webhooks scheme', async () => {
    configure([receiver.url]);
    const user = await signUp();
    await call('PATCH', '/api/settings', { session: user, body: { name: 'Renamed' } });
    await call('DELETE', '/api/settings', { session: user, body: { password: user.password } });

    const batch = await drain();
    expect(batch.Records).toHaveLength(3);
    expect(await handler(batch)).toEqual({ batchItemFailures: [] });
    expect(receiver.received).toHaveLength(3);

    const events = receiver.received.map(verified);
    const byType = Object.fromEntries(events.map((e) => [e.type, e]));
    expect(Object.keys(byType).sort()).toEqual(['user.created', 'user.deleted', 'user.updated']);
    expect(byType['user.created']!.data).toMatchObject({ userId: user.userId, email: user.email, method: 'credentials' });
    expect(byType['user.updated']!.data).toMatchObject({ userId: user.userId, name: 'Renamed', changes: ['name'] });
    expect(byType['user.deleted']!.data).toMatchObject({ userId: user.userId, email: user.email });
    for (const hook of receiver.received) {
      expect(hook.headers['webhook-id']).toBe(JSON.parse(hook.body).id);
      expect(hook.headers['webhook-signature']).toMatch(/^v1,/);
      expect(hook.body).not.toMatch(/passwordHash|argon2/);
    }
    // A forged body fails verification.
    const forged = { ...receiver.received[0]!, body: receiver.received[0]!.body.replace(user.email, 'mallory@example.com') };
    expect(() => verified(forged)).toThrow();
  });

  it('emits user.updated only when something changed, naming the changed fields', async () => {
    configure([receiver.url]);
    const user = await signUp();
    await drain();
    await call('PATCH', '/api/settings', { session: user, body: { name: user.email } });
    await call('PATCH', '/api/settings', { session: user, body: { notifications: { billing: false } } });
    const batch = await drain();
    expect(batch.Records.map((r) => JSON.parse(r.body).data.changes)).toEqual([['notifications']]);
  });

  it('queues a retry, with the same webhook-id, for the endpoint that failed only; a repeated message sends nothing twice', async () => {
    const failing = await startWebhookReceiver({ status: 500 });
    try {
      configure([receiver.url, failing.url]);
      await signUp();
      const batch = await drain();
      expect(batch.Records).toHaveLength(1);
      expect(await handler(batch)).toEqual({ batchItemFailures: [] });
      expect(receiver.received).toHaveLength(1);
      expect(failing.received).toHaveLength(1);

      // SQS hands the same message over again (at-least-once): neither endpoint gets it twice.
      expect(await handler(batch)).toEqual({ batchItemFailures: [] });
      expect([receiver.received.length, failing.received.length]).toEqual([1, 1]);

      // The retry is its own message, addressed to the failing endpoint; the receiver recovered meanwhile.
      const retry = await drain();
      expect(retry.Records.map((r) => JSON.parse(r.body).delivery)).toEqual([expect.objectContaining({ step: 2 })]);
      failing.setStatus(200);
      expect(await handler(retry)).toEqual({ batchItemFailures: [] });
      expect(receiver.received).toHaveLength(1);
      expect(failing.received).toHaveLength(2);
      expect(verified(failing.received[1]!).id).toBe(verified(receiver.received[0]!).id);
      expect((await drain()).Records).toHaveLength(0);
    } finally {
      await failing.close();
    }
  });

  it('gives up on an endpoint that never answers after the bounded timeout and queues its next attempt', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    try {
      configure([`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`]);
      const record = sqsRecord(JSON.stringify({ id: 'evt_hang', type: 'user.updated', timestamp: new Date().toISOString(), data: {} }));
      const started = Date.now();
      expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [] });
      expect(Date.now() - started).toBeLessThan(DELIVERY_TIMEOUT_MS + 2000);
      expect((await drain()).Records.map((r) => JSON.parse(r.body))).toEqual([
        expect.objectContaining({ id: 'evt_hang', delivery: expect.objectContaining({ step: 2 }) }),
      ]);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it('reports the record to SQS when a failed delivery cannot be scheduled again (no events queue)', async () => {
    const failing = await startWebhookReceiver({ status: 503 });
    try {
      configure([failing.url]);
      reloadConfig({ EVENTS_QUEUE_URL: undefined });
      const record = sqsRecord(JSON.stringify({ id: `evt_${randomUUID().slice(0, 8)}`, type: 'user.created', timestamp: new Date().toISOString(), data: {} }));
      expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    } finally {
      await failing.close();
    }
  });

  it('reports malformed messages (they end in the DLQ) and handles the rest of the batch', async () => {
    configure([receiver.url]);
    const good = sqsRecord(JSON.stringify({ id: 'evt_good', type: 'user.created', timestamp: new Date().toISOString(), data: { userId: 'u1' } }));
    const notJson = sqsRecord('{nope');
    const wrongShape = sqsRecord(JSON.stringify({ id: 'evt_x', type: 'user.hacked', data: {} }));
    const out = await handler({ Records: [good, notJson, wrongShape] });
    expect(out.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual([notJson.messageId, wrongShape.messageId].sort());
    expect(receiver.received.map((r) => verified(r).id)).toEqual(['evt_good']);
  });

  it('delivers nothing and reports nothing when no endpoint is configured', async () => {
    reloadConfig({ WEBHOOK_ENDPOINTS: undefined });
    const record = sqsRecord(JSON.stringify({ id: 'evt_none', type: 'user.created', timestamp: new Date().toISOString(), data: {} }));
    expect(await handler({ Records: [record] })).toEqual({ batchItemFailures: [] });
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses loopback and plain-http endpoints in AWS', async () => {
    configure([receiver.url]);
    // A shortened retry schedule is refused in AWS, so the default one applies.
    expect(() => reloadConfig({ STAGE: 'aws' })).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS must cover at least 24 hours/);
    reloadConfig({ STAGE: 'aws', WEBHOOK_RETRY_SCHEDULE_MS: undefined });
    const record = sqsRecord(JSON.stringify({ id: 'evt_aws', type: 'user.created', timestamp: new Date().toISOString(), data: {} }));
    // Refused like any failing receiver: never posted, its next attempt queued (after the default schedule's first pause).
    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([]);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('outbound URL guard', () => {
  it.each([
    'http://93.184.216.34/hook',
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://172.20.0.1/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hook',
    'https://[::1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://localhost/hook',
  ])('refuses %s', async (url) => {
    await expect(assertPublicHttpsUrl(url)).rejects.toThrow();
  });

  it('accepts a public https address', async () => {
    await expect(assertPublicHttpsUrl('https://93.184.216.34/hook')).resolves.toBeUndefined();
  });
});
