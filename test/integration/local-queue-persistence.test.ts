import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPersistentFauxqs } from '#local/queue-store';

/**
 * The local stack's queues live under DATA_DIR (fauxqs's SQLite `dataDir`), so a restart
 * of `npm start` keeps what was queued, delayed or in flight. One emulator is stopped and another
 * started on the same folder (on another port, as a restart gets).
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'local-queues-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function emulator() {
  const app = await buildPersistentFauxqs({ host: '127.0.0.1', dataDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  expect((app.server.address() as AddressInfo).address).toBe('127.0.0.1');
  const client = new SQSClient({
    endpoint: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const queueUrl = (await client.send(new CreateQueueCommand({ QueueName: 'events' }))).QueueUrl!;
  return {
    client,
    queueUrl,
    async stop() {
      client.destroy();
      await app.close();
    },
  };
}

const bodies = async (e: Awaited<ReturnType<typeof emulator>>, waitSeconds: number) =>
  ((await e.client.send(new ReceiveMessageCommand({ QueueUrl: e.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }))).Messages ?? []).map(
    (m) => m.Body,
  );

describe('local queues under DATA_DIR', () => {
  it('keeps queued and delayed messages across a restart of the emulator, and listens on loopback only', async () => {
    const before = await emulator();
    await before.client.send(new SendMessageCommand({ QueueUrl: before.queueUrl, MessageBody: 'queued before the restart' }));
    await before.client.send(new SendMessageCommand({ QueueUrl: before.queueUrl, MessageBody: 'delayed across the restart', DelaySeconds: 2 }));
    await before.stop();

    const after = await emulator();
    try {
      expect(await bodies(after, 0)).toEqual(['queued before the restart']);
      // The delay still holds after the restart, then the message arrives.
      expect(await bodies(after, 5)).toEqual(['delayed across the restart']);
    } finally {
      await after.stop();
    }
  });
});
