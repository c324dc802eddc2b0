import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();
const telegramCalls = (method: string) => bed.fake.calls.filter((c) => c.app === 'telegram' && c.path.endsWith(`/${method}`));

describe('chat-bot skill (Telegram Bot API)', () => {
  it('sends with the token /api/provision stored, registers the webhook with a secret on connect, and records what was sent', async () => {
    const { session, agentId } = await provisionedUser({ chatBotToken: TOKENS.telegram });
    const sent = await skillOk(session, 'chat-bot', { action: 'send', to: '555001', text: 'Doors open at 8pm' });
    expect(sent.message).toMatchObject({ direction: 'out', conversation: '555001', text: 'Doors open at 8pm', skill: 'chat-bot' });
    const [send] = telegramCalls('sendMessage').slice(-1);
    expect(send!.path).toBe(`/telegram/bot${TOKENS.telegram}/sendMessage`);
    expect(send!.body).toEqual({ chat_id: '555001', text: 'Doors open at 8pm' });
    expect(sent.message.externalId).not.toBe('');

    const connected = await skillOk(session, 'chat-bot', { action: 'connect', defaultTarget: '555002' });
    expect(connected.channel).toMatchObject({ app: 'telegram', agentId, tokenSource: 'provisioned', defaultTarget: '555002' });
    expect(connected.channel.inboundUrl).toMatch(/\/api\/channels\/telegram\/hook_[0-9a-f]{32}$/);
    const [hook] = telegramCalls('setWebhook').slice(-1);
    expect(hook!.body.url).toBe(connected.channel.inboundUrl);
    expect(hook!.body.secret_token).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(connected)).not.toContain(hook!.body.secret_token);

    // Without `to`, the connection's default chat.
    await skillOk(session, 'chat-bot', { action: 'send', text: 'Second set at 11' });
    expect(telegramCalls('sendMessage').at(-1)!.body.chat_id).toBe('555002');
    const listed = await skillOk(session, 'chat-bot', { action: 'list_messages' });
    expect(listed.messages.map((m: { text: string }) => m.text)).toEqual(['Second set at 11', 'Doors open at 8pm']);
    const info = await skillOk(session, 'chat-bot', { action: 'channel_info' });
    expect(info.info).toEqual({ botId: '7000001', username: 'stage_bot', name: 'Stage Bot' });
  });

  it('an account without a token: nothing to send with, an empty record; a token given to connect is used', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    expect((await skillOk(user, 'chat-bot', { action: 'list_messages' })).messages).toEqual([]);
    const none = await skill(user, 'chat-bot', { action: 'send', to: '1', text: 'hi' });
    expect([none.status, none.body.code]).toEqual([400, 'CHANNEL_NOT_CONNECTED']);
    expect((await skill(user, 'chat-bot', { action: 'connect' })).body.code).toBe('CHANNEL_TOKEN_REQUIRED');
    const wrong = await skill(user, 'chat-bot', { action: 'connect', token: '999:wrong-token-value' });
    expect([wrong.status, wrong.body.code]).toEqual([502, 'WEBHOOK_REGISTRATION_FAILED']);
    const ok = await skillOk(user, 'chat-bot', { action: 'connect', token: TOKENS.telegram, defaultTarget: '42' });
    expect(ok.channel.tokenSource).toBe('connected');
    await skillOk(user, 'chat-bot', { action: 'send', text: 'hello' });
    expect(telegramCalls('sendMessage').at(-1)!.path).toBe(`/telegram/bot${TOKENS.telegram}/sendMessage`);
  });

  it('refuses invalid bodies for each action; another account sees none of the records', async () => {
    const { session } = await provisionedUser({ chatBotToken: TOKENS.telegram });
    for (const body of [
      { action: 'send', to: '1' },
      { action: 'send', to: 'a b', text: 'x' },
      { action: 'connect', token: 'short' },
      { action: 'list_messages', limit: 0 },
      { action: 'channel_info', target: '1' },
      { action: 'fax' },
    ]) {
      const res = await skill(session, 'chat-bot', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    await skillOk(session, 'chat-bot', { action: 'send', to: '9', text: 'mine' });
    const other = await testSession();
    await subscribe(other.userId, 'solo');
    expect((await skillOk(other, 'chat-bot', { action: 'list_messages' })).messages).toEqual([]);
  });

  it('a webhook Telegram refuses saves nothing and answers 502 WEBHOOK_REGISTRATION_FAILED', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    bed.fake.refuse.setWebhook = true;
    try {
      const refused = await skill(user, 'chat-bot', { action: 'connect', token: TOKENS.telegram, defaultTarget: '42' });
      expect([refused.status, refused.body.code]).toEqual([502, 'WEBHOOK_REGISTRATION_FAILED']);
      expect(refused.body.error).toContain('not saved');
    } finally {
      bed.fake.refuse.setWebhook = false;
    }
    // Nothing stored: no token to send with, no connection to describe.
    const send = await skill(user, 'chat-bot', { action: 'send', text: 'hello' });
    expect([send.status, send.body.code]).toEqual([400, 'NO_DESTINATION']);
    expect((await skill(user, 'chat-bot', { action: 'channel_info' })).body.code).toBe('CHANNEL_NOT_CONNECTED');

    // Once Telegram takes it, the same connect is saved with the hook it registered.
    const ok = await skillOk(user, 'chat-bot', { action: 'connect', token: TOKENS.telegram, defaultTarget: '42' });
    expect(ok.reconnected).toBe(false);
    expect(telegramCalls('setWebhook').at(-1)!.body.url).toBe(ok.channel.inboundUrl);
  });

  it('no answer or log line carries the bot token or the webhook secret', () => {
    expectNoSecretLeaked([TOKENS.telegram, ...telegramCalls('setWebhook').map((c) => c.body.secret_token as string)]);
  });
});
