import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../shared/http/logger';

/**
 * Provisioning queue consumer. Until the launcher is built (agents issue), every message is
 * reported as failed so SQS keeps it and, after the redrive count, moves it to the DLQ: nothing is
 * dropped or marked done without an instance behind it.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  logger().warn('provisioner not built yet; returning the batch to the queue', { count: event.Records.length });
  return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
};
