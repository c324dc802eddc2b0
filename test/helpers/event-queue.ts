import { CreateQueueCommand, DeleteQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { sqs } from '#adapters/queue';
import { config, reloadConfig } from '#platform/config';
import type { PlatformEvent } from '#adapters/events-queue';

/**
 * A queue of its own in the SQS emulator that the platform's events go to while a test runs, so
 * the events it emits are read back without racing other tests (or the delivery worker) for them.
 */
export async function captureEvents() {
  const previous = config().eventsQueueUrl;
  const queueUrl = (await (await sqs()).send(new CreateQueueCommand({ QueueName: `events-capture-${randomUUID()}` }))).QueueUrl!;
  reloadConfig({ EVENTS_QUEUE_URL: queueUrl });
  return {
    /** Every event queued so far. */
    async drain(): Promise<PlatformEvent[]> {
      const events: PlatformEvent[] = [];
      for (;;) {
        const out = await (await sqs()).send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
        if (!out.Messages?.length) return events;
        events.push(...out.Messages.map((m) => JSON.parse(m.Body!) as PlatformEvent));
      }
    },
    async stop() {
      reloadConfig({ EVENTS_QUEUE_URL: previous });
      await (await sqs()).send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    },
  };
}
