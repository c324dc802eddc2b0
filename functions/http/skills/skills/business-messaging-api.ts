import { listWhatsappTemplates, sendWhatsappTemplate } from '#adapters/channels';
import { businessMessagingApiActions as bodies } from '#contract/skill-actions/channels';
import { newMessageId, recordMessage } from '#data/skills/channels';
import { connectChannel, listChannelMessages, outbound, withinDailyChannelLimit } from '#domain/skills/channel-skill';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * business-messaging-api: the WhatsApp Business side of the same number: approved message
 * templates (the only messages WhatsApp lets a business start a conversation with outside the
 * 24-hour window), listed from the business account and sent with their parameters. It shares
 * business-messaging's connection and token.
 */
export const skill: SkillModule = {
  name: 'business-messaging-api',
  actions: {
    connect: action(bodies().connect, (call, body) => connectChannel(call, 'business-messaging-api', body)),
    send_template: action(bodies().send_template, async (call, body) => {
      const { app, target, access } = await outbound(call.userId, 'business-messaging-api', body.to);
      const sent = await withinDailyChannelLimit(call.userId, call.now, () =>
        sendWhatsappTemplate(access, target, { name: body.template, languageCode: body.languageCode, parameters: body.parameters }),
      );
      const message = {
        messageId: newMessageId(),
        app,
        skill: 'business-messaging-api',
        direction: 'out' as const,
        conversation: sent.to,
        text: `template ${body.template} (${body.languageCode})${body.parameters.length ? `: ${body.parameters.join(' | ')}` : ''}`,
        externalId: sent.externalId,
        at: call.now.toISOString(),
      };
      await recordMessage(call.userId, message);
      return { message };
    }),
    list_templates: action(bodies().list_templates, async (call) => {
      const { access } = await outbound(call.userId, 'business-messaging-api', 'templates');
      const templates = await listWhatsappTemplates(access);
      return { templates, count: templates.length };
    }),
    list_messages: action(bodies().list_messages, (call, body) => listChannelMessages(call.userId, 'business-messaging-api', body)),
  },
};
