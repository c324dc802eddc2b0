import * as z from 'zod/mini';
import { lazySchema } from '../route';
import type { SkillActionBodies } from './index';

/**
 * Request bodies of the channel skills: chat-bot (Telegram), community-bot
 * (Discord), business-messaging (WhatsApp Cloud API text messages), business-messaging-api
 * (WhatsApp Business message templates) and team-chat (Slack). Tokens and secrets given to
 * `connect` are stored envelope-encrypted and never answered back.
 */

const Text = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(4000)));
const Target = lazySchema(() =>
  z.string().check(z.trim(), z.minLength(1), z.maxLength(128), z.regex(/^[A-Za-z0-9@_+.:-]+$/, 'must be a chat, channel or phone id')),
);
const Secret = lazySchema(() => z.string().check(z.minLength(8), z.maxLength(512)));
const AgentId = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(64), z.regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -')));
const Limit = lazySchema(() => z._default(z.number().check(z.int(), z.minimum(1), z.maximum(100)), 20));

const connectBase = lazySchema(() => ({
  action: z.literal('connect'),
  agentId: z.optional(AgentId()).check(z.describe('the agent inbound messages go to; default the agent the token was provisioned for')),
  token: z.optional(Secret()).check(z.describe('the bot token; optional when `POST /api/provision` stored one')),
}));
const sendBody = (targetDescription: string) =>
  z.strictObject({
    action: z.literal('send'),
    to: z.optional(Target()).check(z.describe(`${targetDescription}; default the connection's defaultTarget`)),
    text: Text(),
  });
const listMessages = lazySchema(() => z.strictObject({ action: z.literal('list_messages'), direction: z.optional(z.enum(['in', 'out'])), limit: Limit() }));
const channelInfoBody = lazySchema(() => z.strictObject({ action: z.literal('channel_info'), target: z.optional(Target()) }));

export const chatBotActions = lazySchema(() => ({
  connect: z.strictObject({ ...connectBase(), defaultTarget: z.optional(Target()).check(z.describe('Telegram chat id scheduled posts go to')) }),
  send: sendBody('Telegram chat id'),
  list_messages: listMessages(),
  channel_info: z.strictObject({ action: z.literal('channel_info') }),
}));

export const communityBotActions = lazySchema(() => ({
  connect: z.strictObject({
    ...connectBase(),
    publicKey: z
      .optional(z.string().check(z.regex(/^[0-9a-fA-F]{64}$/, "the application's Ed25519 public key, hex")))
      .check(z.describe('verifies the interactions Discord posts to the inbound route')),
    defaultTarget: z.optional(Target()).check(z.describe('Discord channel id scheduled posts go to')),
  }),
  send: sendBody('Discord channel id'),
  list_messages: listMessages(),
  channel_info: channelInfoBody(),
}));

const whatsappConnect = lazySchema(() =>
  z.strictObject({
    ...connectBase(),
    phoneNumberId: z.optional(Target()).check(z.describe('the WhatsApp business phone number id messages are sent from')),
    businessAccountId: z.optional(Target()).check(z.describe('the WhatsApp Business account whose templates are listed')),
    appSecret: z.optional(Secret()).check(z.describe('the Meta app secret that signs webhooks (`X-Hub-Signature-256`)')),
    verifyToken: z
      .optional(Secret())
      .check(
        z.describe(
          "the verify token entered in Meta's webhook settings, answered by the GET subscription check; when omitted on the first connect one is made and answered once as `verifyToken`",
        ),
      ),
    defaultTarget: z.optional(Target()).check(z.describe('phone number (E.164 digits) scheduled posts go to')),
  }),
);

export const businessMessagingActions = lazySchema(() => ({
  connect: whatsappConnect(),
  send: sendBody('recipient phone number, E.164 digits'),
  list_messages: listMessages(),
  channel_info: z.strictObject({ action: z.literal('channel_info') }),
}));

export const businessMessagingApiActions = lazySchema(() => ({
  connect: whatsappConnect(),
  send_template: z.strictObject({
    action: z.literal('send_template'),
    to: z.optional(Target()),
    template: z.string().check(z.regex(/^[a-z0-9_]{1,512}$/, 'a template name: lowercase letters, digits, _'), z.describe('an approved message template')),
    languageCode: z._default(z.string().check(z.regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a language code such as en_US')), 'en_US'),
    parameters: z
      ._default(z.array(z.string().check(z.minLength(1), z.maxLength(1024))).check(z.maxLength(10)), [])
      .check(z.describe('the body parameters {{1}}, {{2}}…')),
  }),
  list_templates: z.strictObject({ action: z.literal('list_templates') }),
  list_messages: listMessages(),
}));

export const teamChatActions = lazySchema(() => ({
  connect: z.strictObject({
    ...connectBase(),
    signingSecret: z.optional(Secret()).check(z.describe('the Slack app signing secret that signs Events API requests')),
    defaultTarget: z.optional(Target()).check(z.describe('Slack channel id scheduled posts go to')),
  }),
  send: sendBody('Slack channel id'),
  list_messages: listMessages(),
  channel_info: channelInfoBody(),
}));

export const channelSkillExamples = {
  'chat-bot': { action: 'send', to: '123456789', text: 'Doors open at 8pm tonight!' },
  'community-bot': { action: 'send', to: '1098765432109876543', text: 'New mix drops Friday.' },
  'business-messaging': { action: 'send', to: '447700900123', text: 'Your guestlist spot is confirmed.' },
  'business-messaging-api': { action: 'send_template', to: '447700900123', template: 'ticket_confirmation', languageCode: 'en_GB', parameters: ['Ada'] },
  'team-chat': { action: 'send', to: 'C0123456789', text: 'Soundcheck moved to 5pm.' },
};

/** The five channel skills' entries of SKILL_ACTION_BODIES. */
export const channelSkillActions: Record<string, SkillActionBodies> = {
  'chat-bot': { bodies: chatBotActions, example: channelSkillExamples['chat-bot'] },
  'community-bot': { bodies: communityBotActions, example: channelSkillExamples['community-bot'] },
  'business-messaging': { bodies: businessMessagingActions, example: channelSkillExamples['business-messaging'] },
  'business-messaging-api': { bodies: businessMessagingApiActions, example: channelSkillExamples['business-messaging-api'] },
  'team-chat': { bodies: teamChatActions, example: channelSkillExamples['team-chat'] },
};
