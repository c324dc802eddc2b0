import { communityBotActions as bodies } from '#contract/skill-actions/channels';
import { connectChannel, describeChannel, listChannelMessages, sendText } from '#domain/skills/channel-skill';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** community-bot: the Discord bot (REST v10). Inbound messages arrive as signed interactions. */
export const skill: SkillModule = {
  name: 'community-bot',
  actions: {
    connect: action(bodies().connect, (call, body) => connectChannel(call, 'community-bot', body)),
    send: action(bodies().send, async (call, body) => ({ message: await sendText(call.userId, 'community-bot', body.to, body.text, call.now) })),
    list_messages: action(bodies().list_messages, (call, body) => listChannelMessages(call.userId, 'community-bot', body)),
    channel_info: action(bodies().channel_info, (call, body) => describeChannel(call.userId, 'community-bot', body.target)),
  },
};
