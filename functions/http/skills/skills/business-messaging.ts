import { businessMessagingActions as bodies } from '#contract/skill-actions/channels';
import { connectChannel, describeChannel, listChannelMessages, sendText } from '#domain/skills/channel-skill';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** business-messaging: WhatsApp Cloud API text messages from the business phone number. */
export const skill: SkillModule = {
  name: 'business-messaging',
  actions: {
    connect: action(bodies().connect, (call, body) => connectChannel(call, 'business-messaging', body)),
    send: action(bodies().send, async (call, body) => ({ message: await sendText(call.userId, 'business-messaging', body.to, body.text, call.now) })),
    list_messages: action(bodies().list_messages, (call, body) => listChannelMessages(call.userId, 'business-messaging', body)),
    channel_info: action(bodies().channel_info, (call) => describeChannel(call.userId, 'business-messaging')),
  },
};
