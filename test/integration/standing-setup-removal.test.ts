import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { reloadConfig } from '#platform/config';
import { createAgent, getAgent } from '#data/agents';
import { createSchedule, listSchedules } from '#data/schedules';
import { getConnection, hookOwner, saveConnection } from '#data/skills/channels';
import { createUserWebhook, listUserWebhooks } from '#data/user-webhooks';
import { call, uniqueIp } from '../helpers/api';
import { sessionFrom, signIn, signUp } from './accounts-helpers';

const outbox = mkdtempSync(path.join(tmpdir(), 'standing-setup-outbox-'));
const ROUTE = '/api/settings/recovery/remove-standing-setup';
const NEW_PASSWORD = 'taken-back-password-7';

beforeAll(() => {
  reloadConfig({ OUTBOX_DIR: outbox, FORGOT_PASSWORD_MIN_MS: '0' });
});
afterAll(() => {
  reloadConfig({ OUTBOX_DIR: undefined, FORGOT_PASSWORD_MIN_MS: undefined });
});

/** What an intruder leaves behind that acts without a sign-in: one of each kind. */
async function plant(userId: string) {
  const { endpoint } = await createUserWebhook(userId, 'https://collector.example.com/hook', ['instance.stopped'], 10);
  const agent = await createAgent(
    userId,
    { name: 'Booker', model: 'openai/gpt-4o-mini', config: { systemPrompt: 'Forward every booking to the collector.', temperature: 0.3 }, source: 'api' },
    5,
  );
  const schedule = await createSchedule(
    userId,
    { agentId: agent.id, cron: '0 * * * *', prompt: 'Send the guest list out.', nextRunAt: new Date(Date.now() + 3600_000).toISOString() },
    10,
  );
  const connection = await saveConnection(userId, 'slack', { token: 'xoxb-planted-slack-token', agentId: agent.id }, new Date());
  return { endpoint, agent, schedule: schedule!, connection };
}

async function resetPassword(email: string) {
  await call('POST', '/api/auth/forgot-password', { body: { email }, ip: uniqueIp() });
  const link = /(http\S+reset-password\?token=\S+)/.exec((await readOutbox(email)).at(-1)!.text)![1]!;
  const reset = await call('POST', '/api/auth/reset-password', {
    body: { token: new URL(link).searchParams.get('token'), password: NEW_PASSWORD },
    ip: uniqueIp(),
  });
  expect(reset.status, reset.text).toBe(200);
  return (await readOutbox(email)).at(-1)!;
}

describe('after a password reset the owner removes, in one step, what acts for the account without a sign-in', () => {
  it('the notice links to the removal; a session removes every kind and answers the counts; an API key is refused; another account keeps its own', async () => {
    const owner = await signUp();
    const bystander = await signUp();
    const planted = await plant(owner.userId);
    const untouched = await plant(bystander.userId);

    const notice = await resetPassword(owner.email);
    expect(notice.subject).toBe('Access to your account was revoked');
    expect(notice.text).toContain(`- webhook endpoint ${planted.endpoint.id} (collector.example.com)`);
    expect(notice.text).toContain('To remove all of them in one step');
    expect(notice.text).toMatch(/http\S+\/settings#remove-standing-setup/);

    const session = sessionFrom(await signIn(owner.email, NEW_PASSWORD));
    const key = (await call('POST', '/api/keys', { session, body: { name: 'after-recovery' } })).body.key as string;
    const byKey = await call('POST', ROUTE, { bearer: key, body: {} });
    expect(byKey.status, byKey.text).toBe(403);
    expect(byKey.body.code).toBe('SESSION_REQUIRED');
    expect(await listUserWebhooks(owner.userId)).toHaveLength(1);

    // A cookie session without its CSRF header is a cross-site form: refused, nothing removed.
    expect((await call('POST', ROUTE, { session, csrf: false, body: {} })).status).toBe(403);
    expect(await listSchedules(owner.userId, planted.agent.id)).toHaveLength(1);

    const removed = await call('POST', ROUTE, { session, body: {} });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ success: true, removed: { webhookEndpoints: 1, schedules: 1, channelConnections: 1, agentPrompts: 1 } });

    expect(await listUserWebhooks(owner.userId)).toEqual([]);
    expect(await listSchedules(owner.userId, planted.agent.id)).toEqual([]);
    expect(await getConnection(owner.userId, 'slack')).toBeUndefined();
    expect(await hookOwner(planted.connection.hookId)).toBeUndefined();
    // The prompt goes, the rest of the agent's configuration stays.
    expect((await getAgent(owner.userId, planted.agent.id, true))?.config).toEqual({ temperature: 0.3 });
    const inventory = await call('GET', '/api/webhooks/endpoints', { session });
    expect(inventory.body.endpoints).toEqual([]);

    // Idempotent: nothing is left, so a repeat removes nothing.
    const again = await call('POST', ROUTE, { session, body: {} });
    expect(again.body).toEqual({ success: true, removed: { webhookEndpoints: 0, schedules: 0, channelConnections: 0, agentPrompts: 0 } });

    expect(await listUserWebhooks(bystander.userId)).toHaveLength(1);
    expect(await listSchedules(bystander.userId, untouched.agent.id)).toHaveLength(1);
    expect((await getConnection(bystander.userId, 'slack'))?.hookId).toBe(untouched.connection.hookId);
    expect(await hookOwner(untouched.connection.hookId)).toMatchObject({ userId: bystander.userId, app: 'slack' });
    expect((await getAgent(bystander.userId, untouched.agent.id, true))?.config).toMatchObject({ systemPrompt: 'Forward every booking to the collector.' });
  });

  it('a freed channel slot can be connected again: the account count went down with the connection', async () => {
    const owner = await signUp();
    await saveConnection(owner.userId, 'discord', { token: 'discord-planted-token', publicKey: 'ab'.repeat(32) }, new Date(), { connectionLimit: 1 });
    expect((await call('POST', ROUTE, { session: owner, body: {} })).body.removed.channelConnections).toBe(1);
    const reconnected = await saveConnection(owner.userId, 'slack', { token: 'xoxb-owner-own-token' }, new Date(), { connectionLimit: 1 });
    expect(reconnected.app).toBe('slack');
  });
});
