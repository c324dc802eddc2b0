import {
  type ChannelApp,
  discordSignatureValid,
  sameSecret,
  sendChannelMessage,
  slackSignatureValid,
  telegramSecretValid,
  whatsappSignatureValid,
} from '#adapters/channels';
import {
  type ChannelConnection,
  type ChannelMessage,
  channelAccess,
  getConnection,
  hookOwner,
  inboundSecretOf,
  markInbound,
  newMessageId,
  recordMessage,
  verifyTokenOf,
} from '#data/skills/channels';
import { forbidden, invalid, unauthenticated } from '#platform/errors';
import { logger } from '#platform/logger';
import { keepForDelivery } from '#data/wake-deliveries';
import { requestWake } from '#domain/lifecycle/wake';
import { AgentExchangeError, askAgent } from './chat';
import { type ChannelSkillName, withinDailyChannelLimit } from '#domain/skills/channel-skill';

/**
 * A messaging app posts to `/api/channels/<app>/<hookId>`: the hook names the account, the app's
 * signature (or secret) proves the sender, and only then is the body read. Each text message is
 * stored once (keyed by the app's own id and time, so a redelivery finds it), handed to the
 * connection's agent like `POST /api/chat`, and the reply goes back through the app's adapter.
 */

type Headers = Record<string, string | undefined>;

const refused = () => unauthenticated('the request is not signed by the messaging app', 'INVALID_SIGNATURE');

async function verified(app: ChannelApp, userId: string, connection: ChannelConnection, rawBody: string, headers: Headers): Promise<boolean> {
  if (app === 'discord') {
    return !!connection.publicKey && discordSignatureValid(rawBody, headers['x-signature-timestamp'], headers['x-signature-ed25519'], connection.publicKey);
  }
  const secret = await inboundSecretOf(userId, connection);
  if (!secret) return false;
  switch (app) {
    case 'telegram':
      return telegramSecretValid(headers['x-telegram-bot-api-secret-token'], secret);
    case 'whatsapp':
      return whatsappSignatureValid(rawBody, headers['x-hub-signature-256'], secret);
    case 'slack':
      return slackSignatureValid(rawBody, headers['x-slack-request-timestamp'], headers['x-slack-signature'], secret);
  }
}

interface Incoming {
  externalId: string;
  conversation: string;
  from: string;
  text: string;
  at: string;
}

const isoFromSeconds = (s: unknown) => new Date(Number(s) * 1000).toISOString();
/** A Discord snowflake carries its creation time (ms since the Discord epoch, 2015). */
const snowflakeTime = (id: string) => new Date(Number((BigInt(id) >> 22n) + 1_420_070_400_000n)).toISOString();

function telegramMessages(update: any): Incoming[] {
  const m = update?.message;
  if (!m || typeof m.text !== 'string' || m.chat?.id === undefined) return [];
  return [
    {
      externalId: `${m.chat.id}:${m.message_id}`,
      conversation: String(m.chat.id),
      from: String(m.from?.username ?? m.from?.id ?? ''),
      text: m.text,
      at: isoFromSeconds(m.date),
    },
  ];
}

function whatsappMessages(payload: any): Incoming[] {
  const out: Incoming[] = [];
  for (const entry of Array.isArray(payload?.entry) ? payload.entry : []) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes : []) {
      for (const m of Array.isArray(change?.value?.messages) ? change.value.messages : []) {
        if (m?.type !== 'text' || typeof m.text?.body !== 'string' || typeof m.id !== 'string') continue;
        out.push({ externalId: m.id, conversation: String(m.from), from: String(m.from), text: m.text.body, at: isoFromSeconds(m.timestamp) });
      }
    }
  }
  return out;
}

function slackMessages(payload: any): Incoming[] {
  const e = payload?.event;
  // Bot messages (the agent's own replies among them) and edits are not new user messages.
  if (payload?.type !== 'event_callback' || e?.type !== 'message' || e.bot_id || e.subtype || typeof e.text !== 'string') return [];
  return [{ externalId: `${e.channel}:${e.ts}`, conversation: String(e.channel), from: String(e.user ?? ''), text: e.text, at: isoFromSeconds(e.ts) }];
}

function discordCommand(interaction: any): Incoming[] {
  if (interaction?.type !== 2 || typeof interaction.id !== 'string' || !/^\d{1,20}$/.test(interaction.id)) return [];
  const options: any[] = Array.isArray(interaction.data?.options) ? interaction.data.options : [];
  const option = options.find((o) => o?.name === 'message' && typeof o.value === 'string') ?? options.find((o) => typeof o?.value === 'string');
  const text = option?.value ?? interaction.data?.name;
  if (typeof text !== 'string') return [];
  const user = interaction.member?.user ?? interaction.user;
  return [
    {
      externalId: interaction.id,
      conversation: String(interaction.channel_id ?? ''),
      from: String(user?.username ?? user?.id ?? ''),
      text,
      at: snowflakeTime(interaction.id),
    },
  ];
}

/** The skill an inbound message of the app is filed under (the WhatsApp number belongs to business-messaging). */
const SKILL_OF: Record<ChannelApp, ChannelSkillName> = {
  telegram: 'chat-bot',
  discord: 'community-bot',
  whatsapp: 'business-messaging',
  slack: 'team-chat',
};

/**
 * Hands one stored message to the agent; the reply text, or undefined with why not. The app is
 * answered at once, so an agent stopped for idleness is woken without waiting: the message is kept
 * and its reply goes out on the channel once the instance runs (functions/http/agent-chat/wake-delivery.ts).
 */
async function agentReply(userId: string, connection: ChannelConnection, text: string, conversation: string): Promise<{ reply?: string; outcome: string }> {
  if (!connection.agentId) return { outcome: 'no agent: connect the channel with an agentId' };
  const woke = await requestWake(userId, 'channel');
  if (woke.state === 'waking') {
    await keepForDelivery(userId, {
      agentId: connection.agentId,
      message: text,
      source: 'channel',
      operationId: woke.operationId,
      channel: { app: connection.app, conversation },
    });
    return { outcome: 'kept: the agent is waking; the reply follows once it runs' };
  }
  try {
    const answer = await askAgent(userId, connection.agentId, text);
    return { reply: answer.content, outcome: 'answered' };
  } catch (err) {
    if (err instanceof AgentExchangeError) return { outcome: `not delivered: ${err.code}` };
    throw err;
  }
}

/**
 * The agent's reply to one inbound message, as a stored outgoing message: sent back through the app
 * (`send`), or (Discord's interaction response) only recorded. Undefined when it could not be sent.
 */
export async function sendAgentReply(
  app: ChannelApp,
  userId: string,
  connection: ChannelConnection,
  incoming: Pick<Incoming, 'conversation' | 'externalId'>,
  reply: string,
  send: boolean,
  now = new Date(),
): Promise<ChannelMessage | undefined> {
  const skill = SKILL_OF[app];
  if (!send) {
    return {
      messageId: newMessageId(),
      app,
      skill,
      direction: 'out',
      conversation: incoming.conversation,
      text: reply,
      externalId: `reply:${incoming.externalId}`,
      at: now.toISOString(),
    };
  }
  try {
    const access = await channelAccess(userId, app, connection);
    if (!access) return undefined;
    // An agent's reply is a message sent like any other: within the plan's daily channel messages.
    const sent = await withinDailyChannelLimit(userId, now, () => sendChannelMessage(app, access, incoming.conversation, reply));
    return { messageId: newMessageId(), app, skill, direction: 'out', conversation: sent.to, text: reply, externalId: sent.externalId, at: now.toISOString() };
  } catch (err) {
    logger().warn('the agent reply could not be sent back', { app, userId, code: (err as { code?: string }).code });
    return undefined;
  }
}

async function takeOne(app: ChannelApp, userId: string, connection: ChannelConnection, incoming: Incoming, now: Date) {
  const skill = SKILL_OF[app];
  const message: ChannelMessage = {
    messageId: `in_${incoming.externalId}`,
    app,
    skill,
    direction: 'in',
    conversation: incoming.conversation,
    from: incoming.from,
    text: incoming.text,
    externalId: incoming.externalId,
    at: incoming.at,
    agent: 'pending',
  };
  if (!(await recordMessage(userId, message))) return { duplicate: true as const };
  const { reply, outcome } = await agentReply(userId, connection, incoming.text, incoming.conversation);
  // Discord takes the reply as the interaction's response; the other apps get a message sent back.
  const replied = reply === undefined ? undefined : await sendAgentReply(app, userId, connection, incoming, reply, app !== 'discord', now);
  if (replied) await recordMessage(userId, replied);
  await markInbound(userId, message, reply !== undefined && !replied ? 'answered; the reply could not be sent' : outcome);
  return { duplicate: false as const, reply };
}

export async function receiveInbound(app: ChannelApp, hookId: string, rawBody: string, headers: Headers) {
  const owner = await hookOwner(hookId);
  if (!owner || owner.app !== app) throw refused();
  const connection = await getConnection(owner.userId, app);
  if (!connection || !(await verified(app, owner.userId, connection, rawBody, headers))) throw refused();
  let payload: any;
  try {
    payload = JSON.parse(rawBody);
  } catch {
    throw invalid('the body is not JSON', 'INVALID_JSON');
  }
  const now = new Date();
  switch (app) {
    case 'slack':
      if (payload?.type === 'url_verification') return { challenge: String(payload.challenge ?? '') };
      break;
    case 'discord': {
      if (payload?.type === 1) return { type: 1 };
      const [command] = discordCommand(payload);
      if (!command) return { type: 4, data: { content: 'Nothing to pass on.' } };
      const taken = await takeOne(app, owner.userId, connection, command, now);
      return { type: 4, data: { content: taken.reply ?? 'The agent is not available right now; your message is kept.' } };
    }
  }
  const messages = app === 'telegram' ? telegramMessages(payload) : app === 'whatsapp' ? whatsappMessages(payload) : slackMessages(payload);
  let stored = 0;
  for (const m of messages) if (!(await takeOne(app, owner.userId, connection, m, now)).duplicate) stored += 1;
  return { ok: true, received: messages.length, stored };
}

/** Meta's GET check of a WhatsApp webhook URL: the challenge to send back when the connection's verify token matches. */
export async function verifyWhatsappSubscription(hookId: string, query: { 'hub.mode'?: string; 'hub.verify_token'?: string; 'hub.challenge'?: string }) {
  const mismatch = () => forbidden('the verify token does not match this connection', 'VERIFY_TOKEN_MISMATCH');
  const owner = await hookOwner(hookId);
  if (owner?.app !== 'whatsapp' || query['hub.mode'] !== 'subscribe') throw mismatch();
  const connection = await getConnection(owner.userId, 'whatsapp');
  const expected = connection && (await verifyTokenOf(owner.userId, connection));
  const given = query['hub.verify_token'];
  if (!expected || !sameSecret(given, expected)) throw mismatch();
  return query['hub.challenge'] ?? '';
}
