import * as z from 'zod/mini';
import { commonErrorResponses, ErrorBody } from './common';
import type { RouteDefinition } from './route';
import { lazySchema } from './route';

/**
 * The channel skills' inbound routes: one per messaging app, public, each
 * verified with the app's own proof over the exact raw body. The hook id in the path (made by
 * the skill's `connect`, given to the app as its webhook URL) names the account; nothing in the
 * body does. A missing or wrong proof, or an unknown hook, answers 401 `INVALID_SIGNATURE` and
 * stores nothing. A verified message is stored in the account's records once (a redelivery with
 * the same app message id changes nothing), handed to the connection's agent as `POST /api/chat`
 * does when it is running, and the agent's reply goes back to the conversation through the app.
 */

const HookId = lazySchema(() =>
  z.string().check(z.regex(/^hook_[0-9a-f]{32}$/, 'a hook id'), z.describe('the hook id of the connection (from the skill `connect` answer `inboundUrl`)')),
);

const inboundResponses = lazySchema(() => ({
  ...commonErrorResponses(),
  200: z.looseObject({}).check(z.describe("the app's expected acknowledgement")),
  401: ErrorBody().check(z.describe('missing or wrong signature, or unknown hook: nothing stored')),
}));

const inbound = (operation: string, app: string, summary: string, description: string, example: unknown): RouteDefinition => ({
  operation,
  method: 'POST',
  path: `/api/channels/${app}/{hookId}`,
  auth: 'none',
  bodyHandling: { kind: 'raw', validatedBy: 'handler', open: true },
  summary,
  description,
  params: () => z.strictObject({ hookId: HookId() }),
  body: () => z.looseObject({}),
  example,
  responses: inboundResponses,
});

export const channelInboundRoutes: RouteDefinition[] = [
  inbound(
    'channelInboundTelegram',
    'telegram',
    'Telegram Bot API webhook of the chat-bot skill: an Update with a message.',
    '`X-Telegram-Bot-Api-Secret-Token` must be the secret the platform gave Telegram with setWebhook when the skill connected. Answers `{ok: true}`; updates without text are acknowledged and ignored.',
    { update_id: 10001, message: { message_id: 42, from: { id: 555, username: 'fan' }, chat: { id: 555, type: 'private' }, date: 1700000000, text: 'hi' } },
  ),
  inbound(
    'channelInboundDiscord',
    'discord',
    'Discord interactions endpoint of the community-bot skill: PING and application commands.',
    "Verified with Ed25519 as Discord signs (`X-Signature-Ed25519` over `X-Signature-Timestamp` + body, the application's public key given to `connect`). A PING answers `{type: 1}`; an application command's text (its `message` option, else its first string option) goes to the agent and the reply is the interaction response `{type: 4, data: {content}}`.",
    {
      id: '1200000000000000001',
      type: 2,
      token: 'interaction-token',
      channel_id: '1098765432109876543',
      data: { name: 'ask', options: [{ name: 'message', type: 3, value: 'hi' }] },
    },
  ),
  inbound(
    'channelInboundWhatsapp',
    'whatsapp',
    'WhatsApp Cloud API webhook of business-messaging: incoming messages.',
    '`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the app secret given to `connect`>`. Each text message of `entry[].changes[].value.messages[]` is stored and answered; statuses and other fields are acknowledged and ignored.',
    {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: '106540352242922' },
                messages: [{ from: '447700900123', id: 'wamid.HBgL', timestamp: '1700000000', type: 'text', text: { body: 'hi' } }],
              },
            },
          ],
        },
      ],
    },
  ),
  inbound(
    'channelInboundSlack',
    'slack',
    'Slack Events API endpoint of team-chat: url_verification and message events.',
    '`X-Slack-Signature: v0=<HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>" with the signing secret>`, the timestamp within five minutes. `url_verification` answers `{challenge}`; a user `message` event goes to the agent and the reply is posted to the channel; bot messages and other events are acknowledged and ignored.',
    { type: 'event_callback', team_id: 'T0001', event: { type: 'message', user: 'U0123', text: 'hi', channel: 'C0123456789', ts: '1700000000.000100' } },
  ),
];

/**
 * Meta checks a WhatsApp webhook URL before it sends anything: a GET with `hub.mode=subscribe`,
 * the verify token entered in its dashboard and a challenge to echo. The hook names the
 * connection, whose own verify token must match.
 */
export const whatsappVerificationRoute = {
  operation: 'channelVerifyWhatsapp',
  method: 'GET',
  path: '/api/channels/whatsapp/{hookId}',
  auth: 'none',
  summary: "WhatsApp Cloud API webhook verification: Meta's subscription check of business-messaging's inbound URL.",
  description:
    "Answers `hub.challenge` as `text/plain` when `hub.mode` is `subscribe` and `hub.verify_token` is the connection's verify token (given to or made by `connect`); 403 `VERIFY_TOKEN_MISMATCH` otherwise, also for an unknown hook.",
  params: () => z.strictObject({ hookId: HookId() }),
  query: () =>
    z.strictObject({
      'hub.mode': z.optional(z.string().check(z.maxLength(32))),
      'hub.verify_token': z.optional(z.string().check(z.maxLength(512))),
      'hub.challenge': z.optional(z.string().check(z.maxLength(256))),
    }),
  responses: () => ({
    ...commonErrorResponses(),
    200: z.string().check(z.describe('the challenge, as text/plain')),
    403: ErrorBody().check(z.describe('wrong mode or verify token, or unknown hook')),
  }),
} as const satisfies RouteDefinition;
