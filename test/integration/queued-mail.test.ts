import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayDeadLetters } from '#local/dead-letters';
import { createQueueWithDlq } from '#local/emulators';
import { pollQueue } from '#local/workers';
import { handler as eventsWorker } from '#functions/workers/webhook-delivery/handler';
import { readOutbox } from '#adapters/email';
import { type QueuedEmail, queueEmail } from '#adapters/email-queue';
import { sqs } from '#adapters/queue';
import { config, emailConfig, reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { accountSession } from '../helpers/api';
import { until } from '../helpers/local-stack';

/**
 * Emails queued on the events queue (adapters/email-queue.ts, used by the spending caps'
 * alerts) and sent by its worker (functions/workers/webhook-delivery/mailer.ts): end to end through a
 * queue of this file's own in the SQS emulator with a dead-letter queue after two receives, drained
 * by the local stack's poller into the real worker, which writes to the local outbox.
 */

const previous = { queue: config().eventsQueueUrl, outbox: process.env.OUTBOX_DIR };
let queues: { queueUrl: string; dlqUrl: string };
let poller: ReturnType<typeof pollQueue>;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'queued-mail-'));
  queues = await createQueueWithDlq(await sqs(), `queued-mail-${randomUUID().slice(0, 8)}`, 2);
  reloadConfig({ EVENTS_QUEUE_URL: queues.queueUrl });
  poller = pollQueue(queues.queueUrl, eventsWorker);
});
afterAll(async () => {
  await poller.stop();
  reloadConfig({ EVENTS_QUEUE_URL: previous.queue, OUTBOX_DIR: previous.outbox });
  rmSync(scratch, { recursive: true, force: true });
});

const countOn = async (queueUrl: string) => {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
  const a = (await (await sqs()).send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }))).Attributes ?? {};
  return names.reduce((sum, n) => sum + Number(a[n] ?? 0), 0);
};
const mailsWith = async (to: string, subject: string) => (await readOutbox(to)).filter((m) => m.subject === subject);
const claimOf = (userId: string, mailId: string) => tenant(userId).get<{ status?: string }>(keys.queuedEmail(userId, mailId), true);

describe('emails queued on the events queue', () => {
  it('are mailed once by the worker, even when SQS delivers the same message twice', async () => {
    const owner = await accountSession();
    const subject = `queued ${randomUUID()}`;
    const mailId = await queueEmail(owner.userId, { to: owner.email, subject, text: 'sent by the worker' });
    const [mail] = await until(async () => ((await mailsWith(owner.email, subject)).length ? mailsWith(owner.email, subject) : undefined), 'the queued mail');
    expect(mail).toMatchObject({ to: owner.email, subject, text: 'sent by the worker' });
    expect(await claimOf(owner.userId, mailId)).toMatchObject({ status: 'sent' });

    // A second delivery of the same message, as SQS may make: nothing more is mailed.
    const duplicate: QueuedEmail = { kind: 'email', id: mailId, userId: owner.userId, message: { to: owner.email, subject, text: 'sent by the worker' } };
    await (await sqs()).send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: JSON.stringify(duplicate) }));
    await until(async () => ((await countOn(queues.queueUrl)) === 0 ? true : undefined), 'the duplicate to be handled');
    expect(await mailsWith(owner.email, subject)).toHaveLength(1);
  });

  it('are retried while the mail cannot be sent, end in the dead-letter queue, and are mailed once when replayed', async () => {
    const owner = await accountSession();
    const subject = `failing ${randomUUID()}`;
    const working = emailConfig().outboxDir;
    // An outbox folder that cannot be created (its parent is a file): every send fails.
    const blocker = path.join(scratch, 'not-a-folder');
    writeFileSync(blocker, '');
    reloadConfig({ OUTBOX_DIR: path.join(blocker, 'outbox') });
    let mailId: string;
    try {
      mailId = await queueEmail(owner.userId, { to: owner.email, subject, text: 'after an outage' });
      await until(async () => ((await countOn(queues.dlqUrl)) === 1 ? true : undefined), 'the mail in the dead-letter queue', 30_000);
      // The failed sends released their claim, so a replay can send it.
      expect(await claimOf(owner.userId, mailId)).toBeUndefined();
    } finally {
      reloadConfig({ OUTBOX_DIR: working });
    }
    expect(await mailsWith(owner.email, subject)).toEqual([]);

    expect(await replayDeadLetters(await sqs(), queues.queueUrl)).toMatchObject({ moved: 1 });
    await until(async () => ((await mailsWith(owner.email, subject)).length ? true : undefined), 'the replayed mail');
    await until(async () => ((await countOn(queues.queueUrl)) === 0 ? true : undefined), 'the queue to settle');
    expect(await mailsWith(owner.email, subject)).toHaveLength(1);
    expect(await claimOf(owner.userId, mailId)).toMatchObject({ status: 'sent' });
  }, 60_000);

  it('are refused at queueing when the events queue is not configured', async () => {
    reloadConfig({ EVENTS_QUEUE_URL: undefined });
    try {
      await expect(queueEmail('user-without-queue', { to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow('EVENTS_QUEUE_URL is not set');
    } finally {
      reloadConfig({ EVENTS_QUEUE_URL: queues.queueUrl });
    }
  });
});
