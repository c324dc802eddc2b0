import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();
const discordCalls = () => bed.fake.calls.filter((c) => c.app === 'discord');

describe('community-bot skill (Discord REST v10)', () => {
  it('posts to the channel with `Authorization: Bot <provisioned token>` and records it; channel info from the API', async () => {
    const { session } = await provisionedUser({ communityBotToken: TOKENS.discord });
    const sent = await skillOk(session, 'community-bot', { action: 'send', to: '1098765432109876543', text: 'New mix drops Friday' });
    const post = discordCalls().at(-1)!;
    expect([post.method, post.path, post.headers.authorization]).toEqual(['POST', '/discord/channels/1098765432109876543/messages', `Bot ${TOKENS.discord}`]);
    expect(post.body).toEqual({ content: 'New mix drops Friday' });
    expect(sent.message).toMatchObject({ conversation: '1098765432109876543', externalId: expect.stringMatching(/^11\d+$/) });
    const info = await skillOk(session, 'community-bot', { action: 'channel_info', target: '1098765432109876543' });
    expect(info.info).toEqual({ channelId: '1098765432109876543', name: 'announcements', guildId: '770000000000000001', type: 0 });
    const connected = await skillOk(session, 'community-bot', { action: 'connect', publicKey: 'ab'.repeat(32), defaultTarget: '1098765432109876543' });
    expect(connected.channel.inboundVerification).toMatch(/^ready/);
    expect((await skillOk(session, 'community-bot', { action: 'list_messages', direction: 'out' })).count).toBe(1);
  });

  it('empty account: no messages, nothing to send with; invalid bodies refused', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    expect((await skillOk(user, 'community-bot', { action: 'list_messages' })).messages).toEqual([]);
    expect((await skill(user, 'community-bot', { action: 'send', to: '1', text: 'x' })).body.code).toBe('CHANNEL_NOT_CONNECTED');
    for (const body of [
      { action: 'send', text: '' },
      { action: 'connect', publicKey: 'xyz' },
      { action: 'channel_info', target: '' },
    ]) {
      expect((await skill(user, 'community-bot', body)).body.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
    }
  });

  it('no answer or log line carries the bot token', () => expectNoSecretLeaked([TOKENS.discord]));
});
