import { teamChatActions as bodies } from '#contract/skill-actions/channels';
import { connectChannel, describeChannel, listChannelMessages, sendText } from '#domain/skills/channel-skill';
import { action, type SkillModule } from '#domain/skills/skill-module';

/** team-chat: the Slack app (Web API `chat.postMessage`); inbound through the Events API. Never provisioned: `connect` stores its token. */
export const skill: SkillModule = {
  name: 'team-chat',
  actions: {
    connect: action(bodies().connect, (call, body) => connectChannel(call, 'team-chat', body)),
    send: action(bodies().send, async (call, body) => ({ message: await sendText(call.userId, 'team-chat', body.to, body.text, call.now) })),
    list_messages: action(bodies().list_messages, (call, body) => listChannelMessages(call.userId, 'team-chat', body)),
    channel_info: action(bodies().channel_info, (call, body) => describeChannel(call.userId, 'team-chat', body.target)),
  },
};
