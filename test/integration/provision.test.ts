import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { decrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import { agentQuotaUsed, listAgents } from '#data/agents';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { createUser } from '#data/users';
import { call, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { drain, privateQueue } from './agents-helpers';

/** POST /api/provision (spec 4.5): channel provisioning through the agents pipeline. */

let queueUrl: string;
const savedQueue = process.env.PROVISIONING_QUEUE_URL;
beforeAll(async () => {
  queueUrl = await privateQueue();
  reloadConfig({ PROVISIONING_QUEUE_URL: queueUrl });
});
afterAll(() => reloadConfig({ PROVISIONING_QUEUE_URL: savedQueue }));

const CHAT_TOKEN = '7412589630:AAHk3vQm9xZ2pLr8TnWc5yBd1FgE4sJuO6a';

/** An account with a stored, active card subscription (as the verified webhook writes it). */
async function payingUser(plan = 'solo', status = 'active') {
  const email = `dj-${randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser({ email, name: 'DJ Nova' });
  const subscriptionId = `sub_${randomUUID().replaceAll('-', '')}`;
  await tenant(user.userId).put({
    ...keys.subscription(user.userId),
    status,
    plan,
    subscriptionId,
    eventCreated: Date.now(),
    updatedAt: new Date().toISOString(),
  });
  return { userId: user.userId, email, subscriptionId, session: await testSession({ userId: user.userId, email }) };
}

const provision = (body: Record<string, unknown>, opts: { session?: TestSession; headers?: Record<string, string> } = {}) =>
  call('POST', '/api/provision', { body, ip: uniqueIp(), ...opts });

describe('POST /api/provision', () => {
  it('needs at least one channel token and refuses the removed identifier fields', async () => {
    const noChannel = await provision({ plan: 'solo', aiProvider: 'openrouter' });
    expect(noChannel.status).toBe(400);
    expect(JSON.stringify(noChannel.body)).toContain('at least one channel token');
    for (const removed of ['businessMessagingPhoneNumberId', 'businessMessagingAccountId', 'communityBotGuildId', 'communityBotChannelId']) {
      const res = await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', [removed]: '12345' });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.issues)).toContain(removed);
    }
  });

  it('answers a missing or free plan with 402 PAYMENT_REQUIRED', async () => {
    const { subscriptionId, session } = await payingUser();
    for (const plan of [undefined, 'free']) {
      const res = await provision({ chatBotToken: CHAT_TOKEN, plan, cardSubscriptionId: subscriptionId }, { session });
      expect(res.status).toBe(402);
      expect(res.body.code).toBe('PAYMENT_REQUIRED');
    }
    const admin = await testSession({ admin: true, userId: `u_admin_prov_${Date.now()}` });
    expect((await provision({ chatBotToken: CHAT_TOKEN }, { session: admin })).status).toBe(402);
  });

  it("provisions into the caller's account when its stored subscription is the one the body names, with the proxy answer and encrypted secrets", async () => {
    const owner = await payingUser('solo');
    await drain(queueUrl);
    const res = await provision(
      {
        chatBotToken: CHAT_TOKEN,
        chatBotUserId: '528491736',
        communityBotToken: 'community-bot-token-secret',
        aiProvider: 'anthropic',
        apiKey: 'sk-ant-user-provider-key',
        plan: 'solo',
        cardSubscriptionId: owner.subscriptionId,
      },
      { session: owner.session },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['liveStreamId', 'streamKey', 'subdomain', 'success', 'url', 'userId']);
    expect(res.body).toMatchObject({ success: true, userId: owner.userId });
    expect(res.body.url).toBe(`https://${res.body.subdomain}.agents.localhost`);
    expect(res.body.liveStreamId).toMatch(/^ls_[0-9a-f]{24}$/);
    expect(res.body.streamKey).toMatch(/^live_/);

    const [agent] = await listAgents(owner.userId);
    expect(agent).toMatchObject({ phase: 'provisioning', source: 'channels', model: 'anthropic/claude-3-5-haiku' });
    expect(agent!.config).toEqual({ model: 'anthropic/claude-3-5-haiku', channels: { chatBot: true, communityBot: true, businessMessaging: false } });
    expect(await drain(queueUrl)).toEqual([{ kind: 'agent', userId: owner.userId, agentId: agent!.id, ownerEmail: owner.email }]);

    const stored = await tenant(owner.userId).get<Record<string, any>>(keys.channelProvision(owner.userId, agent!.id));
    const text = JSON.stringify(stored);
    for (const secret of [CHAT_TOKEN, 'community-bot-token-secret', 'sk-ant-user-provider-key', res.body.streamKey]) expect(text).not.toContain(secret);
    expect(stored).toMatchObject({
      plan: 'solo',
      aiProvider: 'anthropic',
      channels: { chatBot: 'enabled', communityBot: 'enabled', businessMessaging: 'disabled' },
      streaming: { liveStreamId: res.body.liveStreamId, provider: 'local' },
    });
    const opened = await decrypt(stored!.channelTokens.chatBot as EnvelopeRecord, { userId: owner.userId, purpose: 'channel-token' });
    expect(opened.toString()).toBe(CHAT_TOKEN);
    await expect(decrypt(stored!.channelTokens.chatBot as EnvelopeRecord, { userId: 'u_someone_else', purpose: 'channel-token' })).rejects.toThrow();
  });

  it('refuses a subscription id, status or plan that does not match the stored account', async () => {
    const owner = await payingUser('solo');
    const cases = [{ cardSubscriptionId: 'sub_guessed', plan: 'solo' }, { plan: 'solo' }, { cardSubscriptionId: owner.subscriptionId, plan: 'network' }];
    for (const body of cases) {
      const res = await provision({ chatBotToken: CHAT_TOKEN, ...body }, { session: owner.session });
      expect(res.status).toBe(402);
      expect(res.body.code).toBe('PAYMENT_REQUIRED');
    }
    const lapsed = await payingUser('solo', 'canceled');
    expect((await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', cardSubscriptionId: lapsed.subscriptionId }, { session: lapsed.session })).status).toBe(
      402,
    );
    expect(await listAgents(owner.userId)).toEqual([]);
    expect(await agentQuotaUsed(owner.userId)).toBe(0);
  });

  it("defect 5: without a session nobody provisions into another tenant's account, and every anonymous 402 reads the same", async () => {
    const victim = await payingUser('solo');
    const answers = [
      await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', email: victim.email, cardSubscriptionId: victim.subscriptionId }),
      await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo' }, { headers: { 'x-user-email': victim.email } }),
      await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', email: 'nobody-here@example.com', cardSubscriptionId: 'sub_guessed' }),
      await provision({ chatBotToken: CHAT_TOKEN, plan: 'free', email: victim.email }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(402);
      expect(res.body).toEqual(answers[0]!.body);
      expect(res.body.code).toBe('PAYMENT_REQUIRED');
    }
    expect(await listAgents(victim.userId)).toEqual([]);
    expect(await agentQuotaUsed(victim.userId)).toBe(0);
  });

  it('grants the admin/tester bypass only to a signed-in admin or tester, never to a body or header email', async () => {
    const claims = await provision({ chatBotToken: CHAT_TOKEN, plan: 'network', email: 'admin@example.com' });
    expect(claims.status).toBe(402);
    const header = await provision({ chatBotToken: CHAT_TOKEN, plan: 'network' }, { headers: { 'x-user-email': 'tester@example.com' } });
    expect(header.status).toBe(402);
    const user = await testSession();
    const pretending = await provision(
      { chatBotToken: CHAT_TOKEN, plan: 'network', email: 'admin@example.com' },
      { session: user, headers: { 'x-user-email': 'admin@example.com' } },
    );
    expect(pretending.status).toBe(402);

    const admin = await testSession({ admin: true, userId: `u_admin_prov2_${Date.now()}` });
    const ok = await provision({ businessMessagingToken: 'EAAG-business-token', plan: 'network' }, { session: admin });
    expect(ok.status).toBe(200);
    expect(ok.body.userId).toBe(admin.userId);
    const tester = await testSession({ email: 'tester@example.com', userId: `u_tester_${Date.now()}` });
    expect((await provision({ communityBotToken: 'community', plan: 'solo' }, { session: tester })).status).toBe(200);
  });

  it("with a session the agent joins the caller's account, which must itself be paying; the plan limit applies", async () => {
    const owner = await payingUser('label');
    const session = await testSession({ userId: owner.userId, email: owner.email });
    const body = { chatBotToken: CHAT_TOKEN, plan: 'label', cardSubscriptionId: owner.subscriptionId };
    const first = await provision(body, { session });
    expect(first.status).toBe(200);
    expect(first.body.userId).toBe(owner.userId);
    const second = await provision(body, { session });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: 'AGENT_LIMIT_REACHED', current: 1, limit: 1 });

    const stranger = await payingUser('solo');
    const other = await testSession();
    // Someone else's subscription id does not pay for the caller's account.
    expect((await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', cardSubscriptionId: stranger.subscriptionId }, { session: other })).status).toBe(402);
  });

  it('answers 502 when the provisioning queue is unavailable, giving the quota back', async () => {
    const owner = await payingUser('solo');
    reloadConfig({ PROVISIONING_QUEUE_URL: `${queueUrl}-missing` });
    try {
      const res = await provision({ chatBotToken: CHAT_TOKEN, plan: 'solo', cardSubscriptionId: owner.subscriptionId }, { session: owner.session });
      expect(res.status).toBe(502);
    } finally {
      reloadConfig({ PROVISIONING_QUEUE_URL: queueUrl });
    }
    expect(await agentQuotaUsed(owner.userId)).toBe(0);
  });
});

describe('POST /api/provision with an Idempotency-Key', () => {
  it('the same key twice with an API key: one agent, one launch, the same answer replayed, its stream key sealed at rest', async () => {
    const owner = await payingUser('solo');
    const created = await call('POST', '/api/keys', { session: owner.session, body: { name: 'channel provisioning' } });
    expect(created.status).toBe(201);
    const apiKey: string = created.body.key;
    await drain(queueUrl);
    const idempotencyKey = randomUUID();
    const send = () =>
      call('POST', '/api/provision', {
        body: { chatBotToken: CHAT_TOKEN, plan: 'solo', cardSubscriptionId: owner.subscriptionId },
        bearer: apiKey,
        headers: { 'idempotency-key': idempotencyKey },
        ip: uniqueIp(),
      });
    const first = await send();
    expect(first.status, first.text).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);

    expect(await listAgents(owner.userId)).toHaveLength(1);
    expect(await agentQuotaUsed(owner.userId)).toBe(1);
    expect(await drain(queueUrl)).toHaveLength(1);
    const kept = await tenant(owner.userId).get<Record<string, unknown>>(
      // Bound to the credential that earned it (http/steps/idempotency.ts, data/idempotency.ts).
      keys.idempotencyRecord(
        owner.userId,
        'provisionWithChannels',
        createHash('sha256').update(`apiKey:${created.body.id}\u0000${idempotencyKey}`).digest('hex'),
      ),
      true,
    );
    expect(kept?.state).toBe('done');
    expect(JSON.stringify(kept)).not.toContain(first.body.streamKey);
  });

  it('another body under the same key is refused (422) and provisions nothing more', async () => {
    const owner = await payingUser('solo');
    const idempotencyKey = randomUUID();
    const send = (chatBotUserId: string) =>
      provision(
        { chatBotToken: CHAT_TOKEN, chatBotUserId, plan: 'solo', cardSubscriptionId: owner.subscriptionId },
        { session: owner.session, headers: { 'idempotency-key': idempotencyKey } },
      );
    expect((await send('1')).status).toBe(200);
    const other = await send('2');
    expect([other.status, other.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await listAgents(owner.userId)).toHaveLength(1);
  });

  it('without a sign-in the key changes nothing: 402 each time, never a replay, no agent for the named email', async () => {
    const victim = await payingUser('solo');
    const headers = { 'idempotency-key': randomUUID() };
    const body = { chatBotToken: CHAT_TOKEN, plan: 'solo', email: victim.email, cardSubscriptionId: victim.subscriptionId };
    const first = await provision(body, { headers });
    const again = await provision(body, { headers });
    for (const res of [first, again]) expect([res.status, res.body.code, res.headers['idempotent-replayed']]).toEqual([402, 'PAYMENT_REQUIRED', undefined]);
    expect(await listAgents(victim.userId)).toEqual([]);
  });
});
