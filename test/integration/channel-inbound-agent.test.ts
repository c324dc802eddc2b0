import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { accountSession, call, uniqueIp, storeActiveSubscription } from '../helpers/api';
import { startFakeChannels } from '../helpers/fake-channels';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { drain, idleStopInstance, pumpProvisioningUntil, sqsEvent, sqsRecord, useAgentsTestBed, waitFor } from './agents-helpers';
import { getInstance } from '#data/instances';
import { TOKENS } from './channels-helpers';

const bed = useAgentsTestBed();
let fake: Awaited<ReturnType<typeof startFakeChannels>>;
beforeAll(async () => {
  fake = await startFakeChannels(TOKENS);
  reloadConfig(fake.settings);
});
afterAll(async () => {
  await fake.close();
  reloadConfig(Object.fromEntries(Object.keys(fake.settings).map((k) => [k, undefined])));
});

/** A subscribed account that provisions a Telegram chat-bot agent (the provisioning message is left queued). */
async function provisionTelegramAgent() {
  const user = await accountSession();
  const subscriptionId = await storeActiveSubscription(user.userId);
  const res = await call('POST', '/api/provision', {
    session: user,
    ip: uniqueIp(),
    body: { chatBotToken: TOKENS.telegram, plan: 'solo', cardSubscriptionId: subscriptionId },
  });
  expect(res.status, res.text).toBe(200);
  return user;
}

describe('an inbound message reaches the running agent and its reply goes back out through the app', () => {
  it('Telegram: the agent provisioned with the chat-bot token answers, the reply is sent to the same chat and both are recorded', async () => {
    const user = await provisionTelegramAgent();
    const messages = await drain(bed.queueUrl);
    expect((await provisioner(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
    const [{ agentId }] = await tenant(user.userId).queryAll<{ agentId: string }>(keys.channelProvisionPrefix);
    await waitFor(async () => (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent?.status === 'running', 'the agent running');

    const connected = await call('POST', '/api/skills/chat-bot', { session: user, ip: uniqueIp(), body: { action: 'connect' } });
    expect(connected.body.channel.agentId).toBe(agentId);
    const secret = fake.calls.filter((c) => c.path.endsWith('/setWebhook')).at(-1)!.body.secret_token as string;
    const update = JSON.stringify({
      update_id: 5,
      message: { message_id: 9, from: { id: 321 }, chat: { id: 321 }, date: Math.floor(Date.now() / 1000), text: 'what time is the show?' },
    });
    const inbound = await call('POST', new URL(connected.body.channel.inboundUrl).pathname, {
      rawBody: update,
      headers: { 'x-telegram-bot-api-secret-token': secret },
    });
    expect([inbound.status, inbound.body]).toEqual([200, { ok: true, received: 1, stored: 1 }]);

    const reply = fake.calls.filter((c) => c.path === `/telegram/bot${TOKENS.telegram}/sendMessage`).at(-1)!;
    expect(reply.body).toEqual({ chat_id: '321', text: fakeAnswerTo('what time is the show?') });
    const listed = await call('POST', '/api/skills/chat-bot', { session: user, ip: uniqueIp(), body: { action: 'list_messages' } });
    expect(listed.body.messages.map((m: { direction: string; text: string; agent?: string }) => [m.direction, m.text, m.agent])).toEqual([
      ['out', fakeAnswerTo('what time is the show?'), undefined],
      ['in', 'what time is the show?', 'answered'],
    ]);
  });

  it('Telegram, agent stopped for idleness: the app is answered at once, the agent is woken (one launch) and the reply goes out after the wake', async () => {
    const user = await provisionTelegramAgent();
    await pumpProvisioningUntil(bed.queueUrl, async () => (await getInstance(user.userId, true))?.status === 'running');
    const connected = await call('POST', '/api/skills/chat-bot', { session: user, ip: uniqueIp(), body: { action: 'connect' } });
    const secret = fake.calls.filter((c) => c.path.endsWith('/setWebhook')).at(-1)!.body.secret_token as string;
    await idleStopInstance(bed, user.userId);
    const launches = bed.launcher.launchesFor(user.userId).length;
    const sendsTo = (text: string) => fake.calls.filter((c) => c.path === `/telegram/bot${TOKENS.telegram}/sendMessage` && c.body.text === text);

    const update = JSON.stringify({
      update_id: 6,
      message: { message_id: 10, from: { id: 654 }, chat: { id: 654 }, date: Math.floor(Date.now() / 1000), text: 'are you awake?' },
    });
    const inbound = await call('POST', new URL(connected.body.channel.inboundUrl).pathname, {
      rawBody: update,
      headers: { 'x-telegram-bot-api-secret-token': secret },
    });
    expect([inbound.status, inbound.body]).toEqual([200, { ok: true, received: 1, stored: 1 }]);
    expect(sendsTo(fakeAnswerTo('are you awake?'))).toHaveLength(0);

    await pumpProvisioningUntil(bed.queueUrl, async () => (await getInstance(user.userId, true))?.status === 'running');
    await waitFor(async () => sendsTo(fakeAnswerTo('are you awake?')).length > 0, 'the reply after the wake');
    expect(sendsTo(fakeAnswerTo('are you awake?')).map((c) => c.body.chat_id)).toEqual(['654']);
    expect(bed.launcher.launchesFor(user.userId).length).toBe(launches + 1);
  });
});
