import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, request, skill, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();
const APP_SECRET = 'whatsapp-app-secret-value-1234';

describe('business-messaging skill (WhatsApp Cloud API)', () => {
  it('needs the phone number id, then sends a text message from it with the provisioned Bearer token', async () => {
    const { session } = await provisionedUser({ businessMessagingToken: TOKENS.whatsapp });
    const early = await skill(session, 'business-messaging', { action: 'send', to: '447700900123', text: 'hi' });
    expect([early.status, early.body.code]).toEqual([400, 'CHANNEL_NOT_CONFIGURED']);
    const connected = await skillOk(session, 'business-messaging', { action: 'connect', phoneNumberId: '106540352242922', appSecret: APP_SECRET });
    expect(connected.channel).toMatchObject({ phoneNumberId: '106540352242922', tokenSource: 'provisioned' });
    const sent = await skillOk(session, 'business-messaging', { action: 'send', to: '447700900123', text: 'Your spot is confirmed' });
    const post = bed.fake.calls.filter((c) => c.app === 'whatsapp').at(-1)!;
    expect([post.path, post.headers.authorization]).toEqual(['/whatsapp/106540352242922/messages', `Bearer ${TOKENS.whatsapp}`]);
    expect(post.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '447700900123',
      type: 'text',
      text: { preview_url: false, body: 'Your spot is confirmed' },
    });
    expect(sent.message.externalId).toMatch(/^wamid\./);
    const info = await skillOk(session, 'business-messaging', { action: 'channel_info' });
    expect(info.info).toEqual({ phoneNumberId: '106540352242922', displayPhoneNumber: '+44 7700 900000', verifiedName: 'Nova Lane Music' });
  });

  it('empty account and invalid bodies', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    expect((await skillOk(user, 'business-messaging', { action: 'list_messages' })).messages).toEqual([]);
    for (const body of [
      { action: 'send', to: '+44 77', text: 'x' },
      { action: 'connect', appSecret: 'x' },
      { action: 'list_messages', direction: 'sideways' },
    ]) {
      expect((await skill(user, 'business-messaging', body)).body.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
    }
  });

  it("answers Meta's GET subscription check with the challenge only for the connection's own verify token", async () => {
    const { session } = await provisionedUser({ businessMessagingToken: TOKENS.whatsapp });
    const made = await skillOk(session, 'business-messaging', { action: 'connect', phoneNumberId: '106540352242922', appSecret: APP_SECRET });
    expect(made.verifyToken).toMatch(/^[0-9a-f]{48}$/);
    // A reconnect keeps the token and never answers it again.
    expect((await skillOk(session, 'business-messaging', { action: 'connect', defaultTarget: '447700900123' })).verifyToken).toBeUndefined();
    const path = new URL(made.channel.inboundUrl).pathname;
    const check = (mode: string, token: string) =>
      request('GET', `${path}?${new URLSearchParams({ 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': '1158201444' })}`);
    const ok = await check('subscribe', made.verifyToken);
    expect([ok.status, ok.headers['content-type'], ok.text]).toEqual([200, 'text/plain; charset=utf-8', '1158201444']);
    for (const [mode, token] of [
      ['subscribe', `${made.verifyToken}x`],
      ['subscribe', ''],
      ['unsubscribe', made.verifyToken],
    ]) {
      const refused = await check(mode!, token!);
      expect([refused.status, refused.body.code, refused.text]).toEqual([403, 'VERIFY_TOKEN_MISMATCH', expect.not.stringContaining('1158201444')]);
    }
    expect(
      (await request('GET', `${path.replace(/hook_[0-9a-f]+/, `hook_${'0'.repeat(32)}`)}?hub.mode=subscribe&hub.verify_token=${made.verifyToken}`)).status,
    ).toBe(403);

    // A verify token of the caller's choosing, given to connect, is the one Meta must send.
    const other = await provisionedUser({ businessMessagingToken: TOKENS.whatsapp });
    const chosen = await skillOk(other.session, 'business-messaging', { action: 'connect', appSecret: APP_SECRET, verifyToken: 'my-own-verify-token' });
    expect(chosen.verifyToken).toBeUndefined();
    const otherPath = new URL(chosen.channel.inboundUrl).pathname;
    expect((await request('GET', `${otherPath}?hub.mode=subscribe&hub.verify_token=my-own-verify-token&hub.challenge=42`)).text).toBe('42');
    // One connection's token opens no other's hook.
    expect((await request('GET', `${otherPath}?hub.mode=subscribe&hub.verify_token=${made.verifyToken}&hub.challenge=42`)).status).toBe(403);
  });

  it('no answer or log line carries the token or the app secret', () => expectNoSecretLeaked([TOKENS.whatsapp, APP_SECRET]));
});
