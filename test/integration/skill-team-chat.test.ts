import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk, expectNoSecretLeaked } = useChannelsBed();
const SIGNING_SECRET = 'slack-signing-secret-8f3a9c';

describe('team-chat skill (Slack Web API)', () => {
  it('is never provisioned: connect stores the token (encrypted), then chat.postMessage carries it as Bearer', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    expect((await skill(user, 'team-chat', { action: 'connect' })).body.code).toBe('CHANNEL_TOKEN_REQUIRED');
    const connected = await skillOk(user, 'team-chat', { action: 'connect', token: TOKENS.slack, signingSecret: SIGNING_SECRET, defaultTarget: 'C0123456789' });
    expect(connected.channel).toMatchObject({ app: 'slack', tokenSource: 'connected', defaultTarget: 'C0123456789' });
    const sent = await skillOk(user, 'team-chat', { action: 'send', text: 'Soundcheck moved to 5pm' });
    const post = bed.fake.calls.filter((c) => c.app === 'slack').at(-1)!;
    expect([post.path, post.headers.authorization]).toEqual(['/slack/chat.postMessage', `Bearer ${TOKENS.slack}`]);
    expect(post.body).toEqual({ channel: 'C0123456789', text: 'Soundcheck moved to 5pm' });
    expect(sent.message.externalId).toMatch(/^1700000000\.\d+$/);
    expect((await skillOk(user, 'team-chat', { action: 'channel_info', target: 'C0123456789' })).info).toEqual({
      channelId: 'C0123456789',
      name: 'general',
      isPrivate: false,
    });
    expect((await skillOk(user, 'team-chat', { action: 'channel_info' })).info).toEqual({ team: 'Nova Lane', teamId: 'T0001', botUserId: 'U0BOT' });
  });

  it("Slack's `ok: false` is a 502 with its error code, never a success", async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    await skillOk(user, 'team-chat', { action: 'connect', token: 'xoxb-not-the-right-token' });
    const res = await skill(user, 'team-chat', { action: 'send', to: 'C1', text: 'x' });
    expect([res.status, res.body.code, res.body.error]).toEqual([502, 'CHANNEL_ERROR', 'slack refused the call: invalid_auth']);
    expect((await skillOk(user, 'team-chat', { action: 'list_messages' })).messages).toEqual([]);
  });

  it('invalid bodies', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    for (const body of [
      { action: 'send', text: 'x'.repeat(4001) },
      { action: 'connect', signingSecret: 'short' },
      { action: 'list_messages', limit: 101 },
    ]) {
      expect((await skill(user, 'team-chat', body)).body.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
    }
  });

  it('no answer or log line carries the token or the signing secret', () => expectNoSecretLeaked([TOKENS.slack, SIGNING_SECRET, 'xoxb-not-the-right-token']));
});
