import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#http/logger';
import { queueDelivery } from '#adapters/events-queue';
import { deliverEvent, PlatformEventSchema } from './deliver';
import { isQueuedEmail } from '#adapters/email-queue';

/** SQS delays in whole seconds; a retry this close to its time is sent now rather than queued again. */
const DUE_TOLERANCE_MS = 250;

/**
 * Consumer of the events queue (spec 6): each message is one platform event, POSTed signed to its
 * endpoints, or an email queued by a function that does not send mail itself (./mailer.ts). A
 * receiver that fails is not SQS's concern: its next attempt is queued as its own message on the
 * retry schedule (deliver.ts), and a message that arrives before its time (a wait longer than
 * SQS's 15-minute delay) is queued again for the rest. A record is reported in
 * `batchItemFailures` only when the work could not be done (the table or the queue failed): SQS
 * retries it and, after the redrive count, moves it to the dead-letter queue, which has an alarm
 * and a replay command (`npm run replay-dlq`).
 */
async function handleRecord(record: SQSRecord): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    throw new Error('message is not JSON');
  }
  // Loaded by the first email: most of the queue's messages are events.
  if (isQueuedEmail(body)) return (await import('./mailer')).deliverQueuedEmail(body);
  const event = PlatformEventSchema().parse(body);
  if (event.delivery && Date.parse(event.delivery.dueAt) - Date.now() > DUE_TOLERANCE_MS) {
    await queueDelivery({ ...event, delivery: event.delivery });
    return;
  }
  await deliverEvent(event);
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const outcomes = await Promise.allSettled(event.Records.map(handleRecord));
  const batchItemFailures = outcomes.flatMap((o, i) => {
    if (o.status === 'fulfilled') return [];
    const record = event.Records[i]!;
    logger().warn('webhook event not handled; SQS will retry', { messageId: record.messageId, error: (o.reason as Error)?.message });
    return [{ itemIdentifier: record.messageId }];
  });
  return { batchItemFailures };
};
