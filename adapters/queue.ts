import type { SQSClient } from '@aws-sdk/client-sqs';
import { lazyClient } from '#platform/lazy/aws-client';
import { config } from '#platform/config';

/** SQS in AWS, the fauxqs emulator locally and in tests (SQS_ENDPOINT); loaded on the first send, as most requests queue nothing. */
const queueClient = /* @__PURE__ */ lazyClient(
  () => import('#platform/lazy/aws-sqs'),
  (sdk) => new sdk.SQSClient({ region: config().region, endpoint: config().sqsEndpoint, credentials: config().localCredentials, maxAttempts: 3 }),
);

export async function sqs(): Promise<SQSClient> {
  return (await queueClient.get()).client;
}

export function resetQueueClient(): void {
  queueClient.reset();
}

export async function sendJson(queueUrl: string, body: unknown, opts: { delaySeconds?: number } = {}): Promise<string | undefined> {
  const { client, sdk } = await queueClient.get();
  const out = await client.send(new sdk.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body), DelaySeconds: opts.delaySeconds }));
  return out.MessageId;
}
