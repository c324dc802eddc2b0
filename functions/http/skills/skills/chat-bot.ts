import { chatBotActions as bodies } from '#contract/skill-actions/channels';
import { connectChannel, describeChannel, listChannelMessages, sendText } from '#domain/skills/channel-skill';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** chat-bot: the Telegram bot (Bot API). Inbound messages arrive through its webhook route. */
export const skill: SkillModule = {
  name: 'chat-bot',
  actions: {
    connect: action(bodies().connect, (call, body) => connectChannel(call, 'chat-bot', body)),
    send: action(bodies().send, async (call, body) => ({ message: await sendText(call.userId, 'chat-bot', body.to, body.text, call.now) })),
    list_messages: action(bodies().list_messages, (call, body) => listChannelMessages(call.userId, 'chat-bot', body)),
    channel_info: action(bodies().channel_info, (call) => describeChannel(call.userId, 'chat-bot')),
  },
};
