/**
 * `npm run replay-dlq -- --queue events [--dry-run] [--local] [--max N]`: moves the messages of a
 * queue's dead-letter queue back onto the queue so its worker runs them again, once the cause is
 * fixed (the table was down, a bug was deployed). Progress on stderr, the counts as one JSON line
 * on stdout.
 *
 * Where: in AWS, the queue URL from EVENTS_QUEUE_URL / PROVISIONING_QUEUE_URL (the stack's outputs)
 * or `--queue-url`, with the usual AWS credentials. Against `npm start`: `--local` (the endpoint the
 * local stack wrote to $DATA_DIR/sqs-endpoint), or SQS_ENDPOINT / `--endpoint`.
 */
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { config, localSettings } from '#platform/config';
import { LOCAL_SQS_ENDPOINT_FILE, replayDeadLetters } from '#local/dead-letters';

const QUEUES = ['events', 'provisioning'] as const;

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

async function main() {
  const { values } = parseArgs({
    options: {
      queue: { type: 'string' },
      'queue-url': { type: 'string' },
      endpoint: { type: 'string' },
      local: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      max: { type: 'string' },
    },
  });
  const queue = values.queue as (typeof QUEUES)[number] | undefined;
  if (!values['queue-url'] && !QUEUES.includes(queue!)) throw new Error(`--queue must be one of ${QUEUES.join(', ')} (or give --queue-url)`);
  const max = values.max === undefined ? undefined : Number(values.max);
  if (max !== undefined && !(Number.isInteger(max) && max > 0)) throw new Error('--max must be a positive whole number');

  const localFile = path.join(path.resolve(localSettings().DATA_DIR), LOCAL_SQS_ENDPOINT_FILE);
  if (values.local && !existsSync(localFile)) throw new Error(`${localFile} not found: is npm start running with this DATA_DIR?`);
  const endpoint = values.endpoint ?? (values.local ? readFileSync(localFile, 'utf8').trim() : config().sqsEndpoint);
  const sqs = new SQSClient({ region: config().region, ...(endpoint ? { endpoint, credentials: LOCAL_CREDENTIALS } : {}) });
  const configured = queue === 'events' ? config().eventsQueueUrl : config().provisioningQueueUrl;
  const queueUrl = values['queue-url'] ?? configured ?? (await sqs.send(new GetQueueUrlCommand({ QueueName: queue! }))).QueueUrl!;
  const log = (line: string) => process.stderr.write(`[replay-dlq] ${line}\n`);
  log(`queue ${queueUrl}${endpoint ? ` at ${endpoint}` : ''}`);
  const result = await replayDeadLetters(sqs, queueUrl, { dryRun: values['dry-run'], max, progress: log });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  sqs.destroy();
}

main().catch((err) => {
  process.stderr.write(`[replay-dlq] failed: ${(err as Error).message}\n`);
  process.exit(1);
});
