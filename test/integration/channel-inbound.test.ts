import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, request, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();
const APP_SECRET = 'whatsapp-app-secret-inbound-1';
const SIGNING_SECRET = 'slack-signing-secret-inbound-1';

const post = (url: string, rawBody: string, headers: Record<string, string>) => request('POST', new URL(url).pathname, { rawBody, headers });
const inbox = async (session: Parameters<typeof skillOk>[0], skill: string) =>
  (await skillOk(session, skill, { action: 'list_messages', direction: 'in' })).messages;

describe('inbound channel messages (public routes verified by each app)', () => {
  it('Telegram: the secret token given to setWebhook is required; a verified message is stored once and handed to the agent', async () => {
    const { session } = await provisionedUser({ chatBotToken: TOKENS.telegram });
    const { channel } = await skillOk(session, 'chat-bot', { action: 'connect' });
    const secret = bed.fake.calls.filter((c) => c.path.endsWith('/setWebhook')).at(-1)!.body.secret_token as string;
    const update = JSON.stringify({
      update_id: 1,
      message: { message_id: 77, from: { id: 555, username: 'fan' }, chat: { id: 555 }, date: 1_700_000_000, text: 'when is the show?' },
    });

    for (const headers of [{} as Record<string, string>, { 'x-telegram-bot-api-secret-token': 'wrong' }, { 'x-telegram-bot-api-secret-token': `${secret}x` }]) {
      const res = await post(channel.inboundUrl, update, headers);
      expect([res.status, res.body.code]).toEqual([401, 'INVALID_SIGNATURE']);
    }
    expect(await inbox(session, 'chat-bot')).toEqual([]);

    const ok = await post(channel.inboundUrl, update, { 'x-telegram-bot-api-secret-token': secret });
    expect([ok.status, ok.body]).toEqual([200, { ok: true, received: 1, stored: 1 }]);
    // Telegram redelivers until it gets a 200: the same message is not taken twice.
    expect((await post(channel.inboundUrl, update, { 'x-telegram-bot-api-secret-token': secret })).body.stored).toBe(0);
    const [stored, ...rest] = await inbox(session, 'chat-bot');
    expect(rest).toEqual([]);
    // The provisioned agent exists but its instance is not running: the message is kept, the reason recorded.
    expect(stored).toMatchObject({
      direction: 'in',
      conversation: '555',
      from: 'fan',
      text: 'when is the show?',
      at: '2023-11-14T22:13:20.000Z',
      agent: 'not delivered: AGENT_NOT_RUNNING',
    });

    // A hook of another app, or no hook at all, is refused the same way.
    const unknown = await post(channel.inboundUrl.replace(/hook_[0-9a-f]+/, `hook_${'0'.repeat(32)}`), update, { 'x-telegram-bot-api-secret-token': secret });
    expect(unknown.status).toBe(401);
    expect((await post(channel.inboundUrl.replace('/telegram/', '/slack/'), update, {})).status).toBe(401);
  });

  it('WhatsApp: X-Hub-Signature-256 over the raw body with the app secret', async () => {
    const { session } = await provisionedUser({ businessMessagingToken: TOKENS.whatsapp });
    const { channel } = await skillOk(session, 'business-messaging', { action: 'connect', phoneNumberId: '106540352242922', appSecret: APP_SECRET });
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: { messages: [{ from: '447700900123', id: 'wamid.IN1', timestamp: '1700000100', type: 'text', text: { body: 'table for 4?' } }] },
            },
          ],
        },
      ],
    });
    const good = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;
    const bad = `sha256=${createHmac('sha256', 'another-secret').update(body).digest('hex')}`;
    expect((await post(channel.inboundUrl, body, { 'x-hub-signature-256': bad })).status).toBe(401);
    expect((await post(channel.inboundUrl, `${body} `, { 'x-hub-signature-256': good })).status).toBe(401);
    expect(await inbox(session, 'business-messaging')).toEqual([]);
    expect((await post(channel.inboundUrl, body, { 'x-hub-signature-256': good })).body).toEqual({ ok: true, received: 1, stored: 1 });
    expect(await inbox(session, 'business-messaging')).toEqual([
      expect.objectContaining({ conversation: '447700900123', text: 'table for 4?', externalId: 'wamid.IN1' }),
    ]);
  });

  it('Slack: v0 signature with the signing secret and a fresh timestamp; url_verification answers the challenge', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    const { channel } = await skillOk(user, 'team-chat', { action: 'connect', token: TOKENS.slack, signingSecret: SIGNING_SECRET });
    const signed = (body: string, ts = Math.floor(Date.now() / 1000), secret = SIGNING_SECRET) => ({
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
    });
    const challenge = JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'c-123' });
    expect((await post(channel.inboundUrl, challenge, signed(challenge))).body).toEqual({ challenge: 'c-123' });
    expect((await post(channel.inboundUrl, challenge, signed(challenge, Math.floor(Date.now() / 1000) - 600))).status).toBe(401);
    const event = JSON.stringify({
      type: 'event_callback',
      event: { type: 'message', user: 'U1', text: 'sound check?', channel: 'C01', ts: '1700000200.000100' },
    });
    expect((await post(channel.inboundUrl, event, signed(event, undefined, 'not-the-secret'))).status).toBe(401);
    expect(await inbox(user, 'team-chat')).toEqual([]);
    expect((await post(channel.inboundUrl, event, signed(event))).body).toMatchObject({ stored: 1 });
    const botEcho = JSON.stringify({
      type: 'event_callback',
      event: { type: 'message', bot_id: 'B1', text: 'reply', channel: 'C01', ts: '1700000201.000100' },
    });
    expect((await post(channel.inboundUrl, botEcho, signed(botEcho))).body).toMatchObject({ received: 0 });
    expect(await inbox(user, 'team-chat')).toEqual([
      expect.objectContaining({ conversation: 'C01', from: 'U1', text: 'sound check?', agent: expect.stringContaining('no agent') }),
    ]);
  });

  it('Discord: Ed25519 over timestamp + body with the application public key; PING answers type 1', async () => {
    const { session } = await provisionedUser({ communityBotToken: TOKENS.discord });
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const rawPublic = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
    const { channel } = await skillOk(session, 'community-bot', { action: 'connect', publicKey: rawPublic });
    const signed = (body: string, key = privateKey) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      return { 'x-signature-timestamp': timestamp, 'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), key).toString('hex') };
    };
    const ping = JSON.stringify({ id: '1', type: 1 });
    expect((await post(channel.inboundUrl, ping, signed(ping))).body).toEqual({ type: 1 });
    expect((await post(channel.inboundUrl, ping, signed(ping, generateKeyPairSync('ed25519').privateKey))).status).toBe(401);
    const command = JSON.stringify({
      id: '1200000000000000001',
      type: 2,
      channel_id: '1098765432109876543',
      member: { user: { id: '42', username: 'fan' } },
      data: { name: 'ask', options: [{ name: 'message', type: 3, value: 'set times?' }] },
    });
    expect((await post(channel.inboundUrl, command, { ...signed(command), 'x-signature-ed25519': '00'.repeat(64) })).status).toBe(401);
    expect(await inbox(session, 'community-bot')).toEqual([]);
    const res = await post(channel.inboundUrl, command, signed(command));
    expect(res.body).toEqual({ type: 4, data: { content: 'The agent is not available right now; your message is kept.' } });
    expect(await inbox(session, 'community-bot')).toEqual([expect.objectContaining({ conversation: '1098765432109876543', from: 'fan', text: 'set times?' })]);
  });

  it('no answer or log line carries a token or an inbound secret', () =>
    expectNoSecretLeaked([
      TOKENS.telegram,
      TOKENS.whatsapp,
      TOKENS.slack,
      TOKENS.discord,
      APP_SECRET,
      SIGNING_SECRET,
      ...bed.fake.calls.filter((c) => c.path.endsWith('/setWebhook')).map((c) => c.body.secret_token as string),
    ]));
});
