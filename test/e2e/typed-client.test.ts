import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient } from '#clients/typescript/index';
import { startLocalStack, type LocalStack, stopLocalStack } from '../helpers/local-stack';

/**
 * The README walkthrough, driven by the typed client generated from the OpenAPI document
 * (clients/typescript) against `npm start`: the document is proven against the real server, and a
 * path, body or answer the document gets wrong fails to compile or fails here.
 */
describe('the README walkthrough through the typed client', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-client-e2e-'));
  const email = 'you@example.com';
  const password = 'correct-horse-battery';
  let stack: LocalStack;
  let base: string;

  beforeAll(async () => {
    stack = startLocalStack({ DATA_DIR: dataDir, ADMIN_EMAILS: email, PROVISION_HEALTH_INTERVAL_MS: '250' });
    base = await stack.ready;
  }, 90_000);

  afterAll(() => stopLocalStack(stack, dataDir));

  it('signs up, proves the address, provisions an agent and waits for it to run', async () => {
    const anonymous = createPlatformClient({ baseUrl: base });
    const health = await anonymous.GET('/api/health');
    expect(health.data).toMatchObject({ status: 'ok' });

    const registered = await anonymous.POST('/api/register', { body: { email, password } });
    expect(registered.response.status).toBe(201);
    const outbox = path.join(dataDir, 'outbox');
    const mail = readdirSync(outbox)
      .map((name) => JSON.parse(readFileSync(path.join(outbox, name), 'utf8')) as { to: string; text: string })
      .find((m) => m.to === email && m.text.includes('/verify-email?'));
    const verifyToken = new URL(/(http\S+verify-email\?token=\S+)/.exec(mail!.text)![1]!).searchParams.get('token')!;
    expect((await anonymous.POST('/api/auth/verify-email', { body: { token: verifyToken } })).response.status).toBe(200);

    const signedIn = await anonymous.POST('/api/auth/callback/credentials', { body: { email, password } });
    expect(signedIn.response.status).toBe(200);
    const token = /(?:^|,\s*)session=([^;]+)/.exec(signedIn.response.headers.getSetCookie().join(', '))![1]!;
    const api = createPlatformClient({ baseUrl: base, token });

    const settings = await api.GET('/api/settings');
    expect(settings.data).toMatchObject({ email, emailVerified: true });
    const me = settings.data!.id;

    const provisioned = await api.POST('/api/agents/provision', { body: { name: 'my-first-agent' } });
    expect(provisioned.response.status).toBe(201);

    const waited = await api.GET('/api/instance/{userId}', { params: { path: { userId: me }, query: { waitFor: 'running', timeout: 25 } } });
    expect(waited.data).toMatchObject({ status: 'running', reached: true });

    // The agent joined in the same write that made the instance running: no second read needed.
    const agents = await api.GET('/api/agents');
    expect(agents.data?.agents.map((a) => [a.name, a.status])).toEqual([['my-first-agent', 'running']]);
  }, 60_000);
});
