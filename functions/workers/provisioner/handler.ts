import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ProvisioningMessage } from '#adapters/provisioning-queue';
import { logger } from '#http/logger';
import { claimJob, completeJob, releaseJob } from '#data/provision-jobs';
import { giveUp, jobIdOf, noteLaunchAttemptError, runAgentJob, runLifecycleJob } from './launch';

/**
 * Provisioning queue consumer (SQS event source with partial batch responses). Each record is one
 * unit of work, done at most once thanks to its idempotency record; a record that fails (launch
 * error, no capacity, busy duplicate, unreadable body) is reported alone in `batchItemFailures`,
 * so SQS redelivers only it and, after the redrive count, parks it in the DLQ, where `dlqHandler`
 * turns it into an `error` status and releases the quota.
 */

class BusyError extends Error {}

/**
 * Account deletion is the rare message and the only one that calls the card processor (stripe),
 * the file store (S3 client) and the mailer: loaded on the first deletion a container handles, so
 * the launches, every other message, start without them.
 */
const accountDeletion = () => import('./account-deletion');

function parse(record: SQSRecord): ProvisioningMessage {
  return ProvisioningMessage().parse(JSON.parse(record.body));
}

async function doWork(record: SQSRecord): Promise<void> {
  const message = parse(record);
  // Every step of a deletion is idempotent on its own marker; a job record would outlive the partition it deletes.
  if (message.kind === 'account-deletion') return (await accountDeletion()).runAccountDeletion(message.userId);
  const jobId = jobIdOf(message);
  const claim = await claimJob(message.userId, jobId);
  if (claim.state === 'done') return;
  if (claim.state === 'busy') throw new BusyError('another delivery of this work is running');
  try {
    if (message.kind === 'agent') await runAgentJob(message, jobId);
    else await runLifecycleJob(message, jobId);
  } catch (err) {
    await releaseJob(message.userId, jobId, claim.token);
    await noteLaunchAttemptError(message, err).catch((noteErr: Error) => logger().warn('could not record the launch error', { error: noteErr.message }));
    throw err;
  }
  await completeJob(message.userId, jobId, claim.token);
}

async function eachRecord(event: SQSEvent, work: (r: SQSRecord) => Promise<void>, what: string): Promise<SQSBatchResponse> {
  const results = await Promise.allSettled(event.Records.map(work));
  const batchItemFailures = results.flatMap((r, i) => {
    if (r.status === 'fulfilled') return [];
    const record = event.Records[i]!;
    const err = r.reason as Error;
    const log = err instanceof BusyError ? logger().info.bind(logger()) : logger().warn.bind(logger());
    log(`${what} failed; SQS will redeliver it`, { messageId: record.messageId, error: err?.message ?? String(err), name: err?.name });
    return [{ itemIdentifier: record.messageId }];
  });
  return { batchItemFailures };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => eachRecord(event, doWork, 'provisioning work');

/**
 * Consumer of the provisioning DLQ (in AWS a second event source on this function with handler
 * `dlqHandler`; the local stack polls the DLQ into it). Unreadable messages are dropped with a log.
 */
export const dlqHandler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  eachRecord(
    event,
    async (record) => {
      let message: ProvisioningMessage;
      try {
        message = parse(record);
      } catch {
        logger().error('unreadable message in the provisioning DLQ; dropped', { messageId: record.messageId });
        return;
      }
      if (message.kind === 'account-deletion') {
        logger().error('account deletion failed on every retry; queued again', { messageId: record.messageId, userId: message.userId });
        return (await accountDeletion()).requeueAccountDeletion(message.userId);
      }
      logger().warn('provisioning work given up after every retry', { messageId: record.messageId, kind: message.kind, userId: message.userId });
      await giveUp(message);
    },
    'dead-letter handling',
  );
