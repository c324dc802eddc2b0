import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver } from '../helpers/fake-webhook-receiver';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';

const SECRET = `whsec_${Buffer.from('local-stack-webhook-signing-key!!').toString('base64')}`;

/** `npm start` delivers account events to the configured endpoints, signed, as AWS does through SQS. */
describe('npm start delivers webhook events', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-hooks-'));
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let stack: LocalStack;
  let base: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = startLocalStack({ DATA_DIR: dataDir, WEBHOOK_ENDPOINTS: receiver.url, WEBHOOK_SECRET: SECRET });
    base = await stack.ready;
  }, 90_000);

  afterAll(async () => {
    if (stack?.child.exitCode === null) {
      stack.child.kill('SIGTERM');
      await stack.exited();
    }
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a sign-up reaches the receiver as a signed user.created event', async () => {
    const email = `hooks-${Date.now()}@example.com`;
    const res = await fetch(`${base}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'a-long-enough-password' }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };

    for (let i = 0; i < 150 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
    const hook = receiver.received[0]!;
    const payload = new Webhook(SECRET).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as { type: string; data: { id?: string; userId?: string; email?: string } };
    expect(payload.type).toBe('user.created');
    expect(JSON.stringify(payload.data)).toContain(id);
    expect(hook.body).not.toContain('a-long-enough-password');
  });
});
