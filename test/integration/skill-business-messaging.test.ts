import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();
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

  it('no answer or log line carries the token or the app secret', () => expectNoSecretLeaked([TOKENS.whatsapp, APP_SECRET]));
});
