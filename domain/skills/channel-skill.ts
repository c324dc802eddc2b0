import { randomBytes } from 'node:crypto';
import { type ChannelAccess, type ChannelApp, channelInfo, sendChannelMessage, setTelegramWebhook } from '#adapters/channels';
import { config } from '#platform/config';
import { getAgent } from '#data/agents';
import {
  type ChannelConnection,
  channelAccess,
  getConnection,
  newMessageId,
  recentMessages,
  recordMessage,
  saveConnection,
  tokenSource,
  accessForConnect,
  newHookId,
  reserveChannelMessage,
  giveBackChannelMessage,
  channelMessagesOn,
} from '#data/skills/channels';
import { DailyLimitExceededError } from '#data/skills/daily-counter';
import { planAccess } from './plan-access';
import { DomainError } from '#platform/errors';
import { invalid, limitReached, notFound } from '#platform/errors';
import type { SkillCall } from './skill-module';

/**
 * What the five channel skills share: connecting an app (its token, where scheduled posts go, the
 * inbound route and its secret), sending text through the app's adapter with a record of it,
 * the records of what was sent and received, and what the app says about the bot or channel.
 */

export type ChannelSkillName = 'chat-bot' | 'community-bot' | 'business-messaging' | 'business-messaging-api' | 'team-chat';

export const CHANNEL_APP_OF: Record<ChannelSkillName, ChannelApp> = {
  'chat-bot': 'telegram',
  'community-bot': 'discord',
  'business-messaging': 'whatsapp',
  'business-messaging-api': 'whatsapp',
  'team-chat': 'slack',
};

/** The public route each app posts its inbound messages to (the hook names the account). */
export const inboundUrl = (app: ChannelApp, hookId: string) => new URL(`/api/channels/${app}/${hookId}`, config().appUrl).href;

/** How an app proves an inbound request is its own, and whether the connection can check it. */
function inboundVerification(c: ChannelConnection): string {
  switch (c.app) {
    case 'telegram':
      return c.inboundSecret ? 'ready: the webhook is registered with a secret token' : 'missing';
    case 'discord':
      return c.publicKey ? 'ready: Ed25519 signatures checked with the public key' : 'missing: connect with publicKey';
    case 'whatsapp':
      return c.inboundSecret
        ? `ready: X-Hub-Signature-256 checked with the app secret; ${c.verifyToken ? "Meta's GET check answered with the verify token" : 'no verify token'}`
        : 'missing: connect with appSecret';
    case 'slack':
      return c.inboundSecret ? 'ready: X-Slack-Signature checked with the signing secret' : 'missing: connect with signingSecret';
  }
}

async function describe(userId: string, skill: ChannelSkillName, c: ChannelConnection) {
  return {
    skill,
    app: c.app,
    agentId: c.agentId,
    tokenSource: await tokenSource(userId, c.app, c),
    defaultTarget: c.defaultTarget ?? null,
    ...(c.app === 'whatsapp' ? { phoneNumberId: c.phoneNumberId ?? null, businessAccountId: c.businessAccountId ?? null } : {}),
    inboundUrl: inboundUrl(c.app, c.hookId),
    inboundVerification: inboundVerification(c),
    connectedAt: c.connectedAt,
  };
}

export interface ConnectBody {
  agentId?: string;
  token?: string;
  defaultTarget?: string;
  publicKey?: string;
  phoneNumberId?: string;
  businessAccountId?: string;
  appSecret?: string;
  signingSecret?: string;
  verifyToken?: string;
}

export async function connectChannel(call: SkillCall, skill: ChannelSkillName, body: ConnectBody) {
  const app = CHANNEL_APP_OF[skill];
  if (body.agentId && !(await getAgent(call.userId, body.agentId))) throw notFound('no such agent');
  const existing = await getConnection(call.userId, app);
  const hookId = existing?.hookId ?? newHookId();
  const { verifyToken: givenVerifyToken, ...fields } = body;
  // Meta's subscription check needs a verify token: the caller's own, else one made here and
  // answered once (it is pasted into Meta's dashboard), never again.
  const madeVerifyToken = app === 'whatsapp' && !givenVerifyToken && !existing?.verifyToken ? randomBytes(24).toString('hex') : undefined;
  const verifyToken = givenVerifyToken ?? madeVerifyToken;
  // Telegram's webhook secret is made here and handed only to Telegram (setWebhook), never answered.
  const telegramSecret = app === 'telegram' ? randomBytes(32).toString('hex') : undefined;
  const change = {
    agentId: fields.agentId,
    token: fields.token,
    inboundSecret: telegramSecret ?? fields.appSecret ?? fields.signingSecret,
    verifyToken,
    defaultTarget: fields.defaultTarget,
    publicKey: fields.publicKey?.toLowerCase(),
    phoneNumberId: fields.phoneNumberId,
    businessAccountId: fields.businessAccountId,
  };
  if (telegramSecret) {
    // Registered before anything is stored: a connection Telegram never took would look ready
    // while no message could ever arrive.
    const access = await accessForConnect(call.userId, app, existing, change);
    try {
      await setTelegramWebhook(access, inboundUrl(app, hookId), telegramSecret);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      throw new DomainError(
        'upstreamFailed',
        `Telegram did not take the webhook (${err.message}); the connection was not saved`,
        'WEBHOOK_REGISTRATION_FAILED',
      );
    }
  }
  const connectionLimit = (await planAccess(call.userId)).access.limits?.channelConnections ?? 0;
  const saved = await saveConnection(call.userId, app, change, call.now, { current: existing, hookId, connectionLimit });
  return {
    connected: true,
    reconnected: !!existing,
    channel: await describe(call.userId, skill, saved),
    ...(madeVerifyToken ? { verifyToken: madeVerifyToken } : {}),
  };
}

async function requireAccess(userId: string, app: ChannelApp, connection?: ChannelConnection): Promise<ChannelAccess> {
  const access = await channelAccess(userId, app, connection);
  if (!access) throw invalid(`no ${app} token: provision the channel or run \`connect\` with a token`, 'CHANNEL_NOT_CONNECTED');
  return access;
}

/** The connection and the decrypted access for one outbound call, and where it goes. */
export async function outbound(userId: string, skill: ChannelSkillName, to: string | undefined) {
  const app = CHANNEL_APP_OF[skill];
  const connection = await getConnection(userId, app);
  const target = to ?? connection?.defaultTarget;
  if (!target) throw invalid('say where the message goes (`to`) or connect the channel with a defaultTarget', 'NO_DESTINATION');
  return { app, connection, target, access: await requireAccess(userId, app, connection) };
}

/**
 * Runs one send within the plan's daily channel messages (429 CHANNEL_DAILY_LIMIT past it); a send
 * that fails gives its place back. The count is reserved by a conditional ADD, so racing sends
 * cannot pass the limit together.
 */
export async function withinDailyChannelLimit<T>(userId: string, now: Date, send: () => Promise<T>): Promise<T> {
  const limit = (await planAccess(userId)).access.limits?.channelMessagesPerDay ?? 0;
  const day = now.toISOString().slice(0, 10);
  try {
    await reserveChannelMessage(userId, day, limit);
  } catch (err) {
    if (!(err instanceof DailyLimitExceededError)) throw err;
    throw limitReached(`the plan sends at most ${limit} channel messages a day`, 'CHANNEL_DAILY_LIMIT', {
      current: await channelMessagesOn(userId, day),
      limit,
    });
  }
  try {
    return await send();
  } catch (err) {
    await giveBackChannelMessage(userId, day);
    throw err;
  }
}

/** Sends text through the app and records it; `postId` keys a scheduled post's delivery. */
export async function sendText(userId: string, skill: ChannelSkillName, to: string | undefined, text: string, now: Date, extra: { postId?: string } = {}) {
  const { app, target, access } = await outbound(userId, skill, to);
  const sent = await withinDailyChannelLimit(userId, now, () => sendChannelMessage(app, access, target, text));
  const message = {
    messageId: newMessageId(),
    app,
    skill,
    direction: 'out' as const,
    conversation: sent.to,
    text,
    externalId: sent.externalId,
    at: now.toISOString(),
    ...extra,
  };
  await recordMessage(userId, message);
  return message;
}

export async function listChannelMessages(userId: string, skill: ChannelSkillName, body: { direction?: 'in' | 'out'; limit: number }) {
  const app = CHANNEL_APP_OF[skill];
  // The two WhatsApp skills share the app's inbound messages; each lists only what it sent itself.
  const messages = (await recentMessages(userId, app, body.limit * 2, { direction: body.direction })).filter((m) => m.direction === 'in' || m.skill === skill);
  return { messages: messages.slice(0, body.limit), count: Math.min(messages.length, body.limit) };
}

export async function describeChannel(userId: string, skill: ChannelSkillName, target?: string) {
  const app = CHANNEL_APP_OF[skill];
  const connection = await getConnection(userId, app);
  const access = await requireAccess(userId, app, connection);
  const info = await channelInfo(app, access, target);
  return { channel: connection ? await describe(userId, skill, connection) : { skill, app, tokenSource: 'provisioned', connected: false }, info };
}
