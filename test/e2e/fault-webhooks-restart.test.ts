import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { type LocalStack, startLocalStack, stopLocalStack, until } from '../helpers/local-stack';

const SECRET = `whsec_${Buffer.from('restart-webhook-signing-key-0001').toString('base64')}`;

/**
 * A webhook retry waiting in the local queue survives a restart of `npm start` (the
 * queues persist under DATA_DIR): the receiver is down while the stack fails twice and schedules
 * the next attempt; the stack is stopped, the receiver comes back, and the restarted stack
 * delivers the event, once, signed, with its original id.
 */
describe('npm start keeps a pending webhook retry across a restart', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-hook-restart-'));
  let stack: LocalStack | undefined;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;

  afterAll(async () => {
    await stopLocalStack(stack, dataDir);
    await receiver?.close();
  });

  it('delivers the event after the restart', async () => {
    receiver = await startWebhookReceiver();
    await receiver.down();
    const env = { DATA_DIR: dataDir, WEBHOOK_ENDPOINTS: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_SCHEDULE_MS: '500,8000' };
    stack = startLocalStack(env);
    const base = await stack.ready;
    const email = `restart-hooks-${Date.now()}@example.com`;
    const registered = await fetch(`${base}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'a-long-enough-password' }),
    });
    expect(registered.status).toBe(201);
    const first = stack;
    await until(
      async () => ((first.output().stderr.match(/webhook not delivered/g) ?? []).length >= 2 ? true : undefined),
      'two failed attempts (the last one schedules a retry 8 s later)',
    );
    first.child.kill('SIGTERM');
    await first.exited();

    await receiver.up();
    stack = startLocalStack(env);
    await stack.ready;
    const restarted = Date.now();
    await until(async () => (receiver!.received.length ? true : undefined), 'the retry after the restart', 30_000);
    process.stderr.write(`[fault-webhooks-restart] delivered ${Date.now() - restarted} ms after the restarted stack was ready\n`);
    expect(receiver.received).toHaveLength(1);
    const payload = new Webhook(SECRET).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as {
      id: string;
      type: string;
      data: { email: string };
    };
    expect(payload).toMatchObject({ type: 'user.created', data: { email } });
    expect(receiver.received[0]!.headers['webhook-id']).toBe(payload.id);
  }, 120_000);
});
