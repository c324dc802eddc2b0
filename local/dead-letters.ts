/**
 * Moving a queue's dead-letter messages back onto it (`npm run replay-dlq`, bin/replay-dlq.ts),
 * through the SQS API, so it works the same on SQS and on the local emulator. The dead-letter
 * queue is the one the queue's redrive policy names. Each batch is sent to the queue before it is
 * deleted from the dead-letter queue, so a failure midway duplicates at most one batch and never
 * loses one (the workers skip what they already did: deliveries by event and endpoint).
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** The file in DATA_DIR where `npm start` writes its SQS emulator's endpoint, for the replay command. */
export const LOCAL_SQS_ENDPOINT_FILE = 'sqs-endpoint';

export interface ReplayResult {
  queueUrl: string;
  deadLetterQueueUrl: string;
  /** Messages the dead-letter queue held when the replay started (approximate, as SQS counts). */
  waiting: number;
  moved: number;
}

/** The dead-letter queue of `queueUrl`, from its redrive policy (`arn:aws:sqs:<region>:<account>:<name>`). */
export async function deadLetterQueueOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const attributes = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }))).Attributes;
  if (!attributes?.RedrivePolicy) throw new Error(`${queueUrl} has no dead-letter queue (no redrive policy)`);
  const arn = (JSON.parse(attributes.RedrivePolicy) as { deadLetterTargetArn: string }).deadLetterTargetArn;
  const [, , , , account, name] = arn.split(':');
  return (await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))).QueueUrl!;
}

const countOf = async (sqs: SQSClient, queueUrl: string) =>
  Number(
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }))).Attributes
      ?.ApproximateNumberOfMessages ?? 0,
  );

/** Sends a batch to the queue and deletes from the dead-letter queue only what was sent. */
async function moveBatch(sqs: SQSClient, from: string, to: string, messages: Message[]): Promise<number> {
  const sent = await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: to,
      Entries: messages.map((m, i) => ({ Id: String(i), MessageBody: m.Body!, MessageAttributes: m.MessageAttributes })),
    }),
  );
  if (sent.Failed?.length) throw new Error(`the queue refused ${sent.Failed.length} message(s): ${sent.Failed.map((f) => f.Message ?? f.Code).join('; ')}`);
  const deleted = await sqs.send(
    new DeleteMessageBatchCommand({ QueueUrl: from, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
  );
  if (deleted.Failed?.length) throw new Error(`could not delete ${deleted.Failed.length} replayed message(s) from the dead-letter queue`);
  return messages.length;
}

export async function replayDeadLetters(
  sqs: SQSClient,
  queueUrl: string,
  opts: { dryRun?: boolean; max?: number; progress?: (line: string) => void } = {},
): Promise<ReplayResult> {
  const progress = opts.progress ?? (() => undefined);
  const deadLetterQueueUrl = await deadLetterQueueOf(sqs, queueUrl);
  const waiting = await countOf(sqs, deadLetterQueueUrl);
  progress(`${waiting} message(s) in ${deadLetterQueueUrl}`);
  if (opts.dryRun) {
    progress('dry run: nothing moved');
    return { queueUrl, deadLetterQueueUrl, waiting, moved: 0 };
  }
  const max = opts.max ?? Number.POSITIVE_INFINITY;
  let moved = 0;
  while (moved < max) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: Math.min(10, max - moved),
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
      }),
    );
    if (!out.Messages?.length) break;
    moved += await moveBatch(sqs, deadLetterQueueUrl, queueUrl, out.Messages);
    progress(`moved ${moved}${Number.isFinite(waiting) ? ` of ${waiting}` : ''} back to ${queueUrl}`);
  }
  progress(`done: ${moved} message(s) replayed, ${await countOf(sqs, deadLetterQueueUrl)} left in the dead-letter queue`);
  return { queueUrl, deadLetterQueueUrl, waiting, moved };
}
