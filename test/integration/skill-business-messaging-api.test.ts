import { describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { subscribe } from './agents-helpers';
import { TOKENS, useChannelsBed } from './channels-helpers';

const { bed, skill, skillOk, provisionedUser, expectNoSecretLeaked } = useChannelsBed();

describe('business-messaging-api skill (WhatsApp Business message templates)', () => {
  it("lists the business account's templates and sends one with its parameters", async () => {
    const { session } = await provisionedUser({ businessMessagingToken: TOKENS.whatsapp });
    expect((await skill(session, 'business-messaging-api', { action: 'list_templates' })).body.code).toBe('CHANNEL_NOT_CONFIGURED');
    await skillOk(session, 'business-messaging-api', { action: 'connect', phoneNumberId: '106540352242922', businessAccountId: '102290129340398' });
    const listed = await skillOk(session, 'business-messaging-api', { action: 'list_templates' });
    expect(listed.templates.map((t: { name: string }) => t.name)).toEqual(['ticket_confirmation', 'show_reminder']);
    const get = bed.fake.calls.filter((c) => c.app === 'whatsapp').at(-1)!;
    expect([get.method, get.path, get.headers.authorization]).toEqual(['GET', '/whatsapp/102290129340398/message_templates', `Bearer ${TOKENS.whatsapp}`]);

    const sent = await skillOk(session, 'business-messaging-api', {
      action: 'send_template',
      to: '447700900123',
      template: 'ticket_confirmation',
      languageCode: 'en_GB',
      parameters: ['Ada'],
    });
    const post = bed.fake.calls.filter((c) => c.app === 'whatsapp').at(-1)!;
    expect(post.body).toEqual({
      messaging_product: 'whatsapp',
      to: '447700900123',
      type: 'template',
      template: { name: 'ticket_confirmation', language: { code: 'en_GB' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }] },
    });
    expect(sent.message).toMatchObject({ skill: 'business-messaging-api', text: 'template ticket_confirmation (en_GB): Ada' });
    // Each WhatsApp skill lists what it sent itself.
    expect((await skillOk(session, 'business-messaging-api', { action: 'list_messages' })).count).toBe(1);
    expect((await skillOk(session, 'business-messaging', { action: 'list_messages' })).count).toBe(0);
  });

  it('empty account and invalid bodies', async () => {
    const user = await testSession();
    await subscribe(user.userId, 'solo');
    expect((await skillOk(user, 'business-messaging-api', { action: 'list_messages' })).messages).toEqual([]);
    for (const body of [
      { action: 'send_template', template: 'Bad Name' },
      { action: 'send_template', template: 'ok', languageCode: 'english' },
      { action: 'send' },
    ]) {
      expect((await skill(user, 'business-messaging-api', body)).body.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
    }
  });

  it('no answer or log line carries the token', () => expectNoSecretLeaked([TOKENS.whatsapp]));
});
