import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config';

let client: SQSClient | undefined;

/** SQS in AWS, the fauxqs emulator locally and in tests (SQS_ENDPOINT). */
export function sqs(): SQSClient {
  client ??= new SQSClient({ region: config().region, endpoint: config().sqsEndpoint, credentials: config().localCredentials, maxAttempts: 3 });
  return client;
}

export function resetQueueClient(): void {
  client?.destroy();
  client = undefined;
}

export async function sendJson(queueUrl: string, body: unknown, opts: { delaySeconds?: number } = {}): Promise<string | undefined> {
  const out = await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body), DelaySeconds: opts.delaySeconds }));
  return out.MessageId;
}
