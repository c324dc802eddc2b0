import * as z from 'zod';

/**
 * Request bodies of the channel skills (issue 13 part C): chat-bot (Telegram), community-bot
 * (Discord), business-messaging (WhatsApp Cloud API text messages), business-messaging-api
 * (WhatsApp Business message templates) and team-chat (Slack). Tokens and secrets given to
 * `connect` are stored envelope-encrypted and never answered back.
 */

const Text = z.string().trim().min(1).max(4000);
const Target = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9@_+.:-]+$/, 'must be a chat, channel or phone id');
const Secret = z.string().min(8).max(512);
const AgentId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -');
const Limit = z.number().int().min(1).max(100).default(20);

const connectBase = {
  action: z.literal('connect'),
  agentId: AgentId.optional().describe('the agent inbound messages go to; default the agent the token was provisioned for'),
  token: Secret.optional().describe('the bot token; optional when `POST /api/provision` stored one'),
};
const sendBody = (targetDescription: string) =>
  z.strictObject({ action: z.literal('send'), to: Target.optional().describe(`${targetDescription}; default the connection's defaultTarget`), text: Text });
const listMessages = z.strictObject({ action: z.literal('list_messages'), direction: z.enum(['in', 'out']).optional(), limit: Limit });
const channelInfoBody = z.strictObject({ action: z.literal('channel_info'), target: Target.optional() });

export const chatBotActions = {
  connect: z.strictObject({ ...connectBase, defaultTarget: Target.optional().describe('Telegram chat id scheduled posts go to') }),
  send: sendBody('Telegram chat id'),
  list_messages: listMessages,
  channel_info: z.strictObject({ action: z.literal('channel_info') }),
};

export const communityBotActions = {
  connect: z.strictObject({
    ...connectBase,
    publicKey: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, "the application's Ed25519 public key, hex")
      .optional()
      .describe('verifies the interactions Discord posts to the inbound route'),
    defaultTarget: Target.optional().describe('Discord channel id scheduled posts go to'),
  }),
  send: sendBody('Discord channel id'),
  list_messages: listMessages,
  channel_info: channelInfoBody,
};

const whatsappConnect = z.strictObject({
  ...connectBase,
  phoneNumberId: Target.optional().describe('the WhatsApp business phone number id messages are sent from'),
  businessAccountId: Target.optional().describe('the WhatsApp Business account whose templates are listed'),
  appSecret: Secret.optional().describe('the Meta app secret that signs webhooks (`X-Hub-Signature-256`)'),
  verifyToken: Secret.optional().describe(
    "the verify token entered in Meta's webhook settings, answered by the GET subscription check; when omitted on the first connect one is made and answered once as `verifyToken`",
  ),
  defaultTarget: Target.optional().describe('phone number (E.164 digits) scheduled posts go to'),
});

export const businessMessagingActions = {
  connect: whatsappConnect,
  send: sendBody('recipient phone number, E.164 digits'),
  list_messages: listMessages,
  channel_info: z.strictObject({ action: z.literal('channel_info') }),
};

export const businessMessagingApiActions = {
  connect: whatsappConnect,
  send_template: z.strictObject({
    action: z.literal('send_template'),
    to: Target.optional(),
    template: z
      .string()
      .regex(/^[a-z0-9_]{1,512}$/, 'a template name: lowercase letters, digits, _')
      .describe('an approved message template'),
    languageCode: z
      .string()
      .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a language code such as en_US')
      .default('en_US'),
    parameters: z.array(z.string().min(1).max(1024)).max(10).default([]).describe('the body parameters {{1}}, {{2}}…'),
  }),
  list_templates: z.strictObject({ action: z.literal('list_templates') }),
  list_messages: listMessages,
};

export const teamChatActions = {
  connect: z.strictObject({
    ...connectBase,
    signingSecret: Secret.optional().describe('the Slack app signing secret that signs Events API requests'),
    defaultTarget: Target.optional().describe('Slack channel id scheduled posts go to'),
  }),
  send: sendBody('Slack channel id'),
  list_messages: listMessages,
  channel_info: channelInfoBody,
};

export const channelSkillExamples = {
  'chat-bot': { action: 'send', to: '123456789', text: 'Doors open at 8pm tonight!' },
  'community-bot': { action: 'send', to: '1098765432109876543', text: 'New mix drops Friday.' },
  'business-messaging': { action: 'send', to: '447700900123', text: 'Your guestlist spot is confirmed.' },
  'business-messaging-api': { action: 'send_template', to: '447700900123', template: 'ticket_confirmation', languageCode: 'en_GB', parameters: ['Ada'] },
  'team-chat': { action: 'send', to: 'C0123456789', text: 'Soundcheck moved to 5pm.' },
};

/** The five channel skills' entries of SKILL_ACTION_BODIES. */
export const channelSkillActions = {
  'chat-bot': { bodies: chatBotActions, example: channelSkillExamples['chat-bot'] },
  'community-bot': { bodies: communityBotActions, example: channelSkillExamples['community-bot'] },
  'business-messaging': { bodies: businessMessagingActions, example: channelSkillExamples['business-messaging'] },
  'business-messaging-api': { bodies: businessMessagingApiActions, example: channelSkillExamples['business-messaging-api'] },
  'team-chat': { bodies: teamChatActions, example: channelSkillExamples['team-chat'] },
};
