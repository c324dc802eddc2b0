import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser } from '#data/users';
import { resetLogger } from '#http/logger';
import { call, testSession, uniqueIp, type CallOptions, type TestSession, storeActiveSubscription } from '../helpers/api';
import { startFakeChannels } from '../helpers/fake-channels';
import { privateQueue } from './agents-helpers';

/** Bot tokens of the apps; the fake accepts only these, and none may appear in an answer or a log line. */
export const TOKENS = {
  telegram: '7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6a',
  discord: 'MTA5ODc2NTQzMjEwOTg3NjU0Mw.GhXk2v.discord-bot-token-secret',
  whatsapp: 'EAAGm0PX4ZCpsBAwhatsapp-cloud-token-secret',
  slack: 'xoxb-1234567890-0987654321-slack-bot-token-secret',
};

/**
 * The channel skills' test bed: the loopback fake of the four apps behind the base-URL settings,
 * every response body and log line of the file kept, so a file can check that no token or secret
 * it handled ever left the platform.
 */
export function useChannelsBed() {
  const bed = {
    fake: undefined as unknown as Awaited<ReturnType<typeof startFakeChannels>>,
    responses: [] as string[],
    logLines: [] as string[],
    queueUrl: '',
  };
  const saved = { ...process.env };
  let restoreWrites = () => {};
  beforeAll(async () => {
    [bed.fake, bed.queueUrl] = await Promise.all([startFakeChannels(TOKENS), privateQueue()]);
    reloadConfig({ ...bed.fake.settings, PROVISIONING_QUEUE_URL: bed.queueUrl, LOG_LEVEL: 'DEBUG' });
    resetLogger();
    const originals = { out: process.stdout.write, err: process.stderr.write };
    const tap = ((chunk: unknown, ...rest: unknown[]) => {
      bed.logLines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = tap;
    process.stderr.write = tap;
    restoreWrites = () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
    };
  });
  afterAll(async () => {
    restoreWrites();
    await bed.fake.close();
    reloadConfig(Object.fromEntries(['LOG_LEVEL', 'PROVISIONING_QUEUE_URL', ...Object.keys(bed.fake.settings)].map((k) => [k, saved[k]])));
    resetLogger();
  });

  const request = async (method: string, path: string, opts: CallOptions = {}) => {
    const res = await call(method, path, { ip: uniqueIp(), ...opts });
    bed.responses.push(`${res.status} ${JSON.stringify(res.headers)} ${res.text ?? ''}`);
    return res;
  };
  const skill = (user: TestSession, name: string, body: unknown) => request('POST', `/api/skills/${name}`, { session: user, body });
  const skillOk = async (user: TestSession, name: string, body: unknown) => {
    const res = await skill(user, name, body);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  /** A paying account that provisioned an agent with channel tokens through `POST /api/provision`. */
  async function provisionedUser(tokens: { chatBotToken?: string; communityBotToken?: string; businessMessagingToken?: string }) {
    const email = `chan-${randomUUID().slice(0, 8)}@example.com`;
    const user = await createUser({ email, name: 'Nova Lane' });
    const subscriptionId = await storeActiveSubscription(user.userId);
    const session = await testSession({ userId: user.userId, email });
    const res = await request('POST', '/api/provision', {
      session,
      body: { ...tokens, plan: 'solo', aiProvider: 'openrouter', cardSubscriptionId: subscriptionId },
    });
    expect(res.status, res.text).toBe(200);
    const [agent] = await tenant(user.userId).queryAll<{ agentId: string }>(keys.channelProvisionPrefix);
    return { session, agentId: agent!.agentId };
  }

  /** No answer and no log line of the file carries a token or secret it handled. */
  function expectNoSecretLeaked(secrets: string[]) {
    expect(bed.responses.length).toBeGreaterThan(0);
    const haystack = [...bed.responses, ...bed.logLines].join('\n');
    for (const secret of secrets) expect(haystack.includes(secret), `a secret leaked: ${secret.slice(0, 6)}…`).toBe(false);
  }

  return { bed, request, skill, skillOk, provisionedUser, expectNoSecretLeaked };
}
