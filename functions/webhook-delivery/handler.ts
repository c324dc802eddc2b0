import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../../shared/http/logger';
import { deliverEvent, PlatformEventSchema } from './deliver';

/**
 * Consumer of the events queue (spec 6): each message is one platform event, POSTed signed to
 * every configured endpoint. A record that could not be delivered everywhere is reported in
 * `batchItemFailures`: SQS makes it visible again after the visibility timeout (the backoff) and
 * moves it to the dead-letter queue after the redrive count. The request that emitted the event
 * only enqueued it, so a failing receiver never slows or fails it.
 */
async function handleRecord(record: SQSRecord): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    throw new Error('message is not JSON');
  }
  const event = PlatformEventSchema.parse(body);
  const attempt = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  await deliverEvent(event, attempt > 1, attempt);
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const outcomes = await Promise.allSettled(event.Records.map(handleRecord));
  const batchItemFailures = outcomes.flatMap((o, i) => {
    if (o.status === 'fulfilled') return [];
    const record = event.Records[i]!;
    logger().warn('webhook event not delivered; SQS will retry', { messageId: record.messageId, error: (o.reason as Error)?.message });
    return [{ itemIdentifier: record.messageId }];
  });
  return { batchItemFailures };
};
