import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { channelsConfig } from '#platform/config';
import { DomainError } from '#platform/errors';

/**
 * The messaging apps the channel skills speak, each through its own real HTTP API at a base URL
 * setting (tests point them at loopback fakes):
 * - telegram (chat-bot): Bot API, `POST /bot<token>/<method>`, answers `{ok, result}`;
 * - discord (community-bot): REST v10, `Authorization: Bot <token>`;
 * - whatsapp (business-messaging, business-messaging-api): Cloud API on the Graph API, `Authorization: Bearer <token>`;
 * - slack (team-chat): Web API, `Authorization: Bearer <token>`, answers `{ok, error?}` with 200.
 * Tokens are handed in per call and never appear in an error or a log line: a failure names the
 * app and its status or error code only.
 */
export const CHANNEL_APPS = ['telegram', 'discord', 'whatsapp', 'slack'] as const;
export type ChannelApp = (typeof CHANNEL_APPS)[number];

export interface ChannelAccess {
  token: string;
  /** WhatsApp: the business phone number messages are sent from. */
  phoneNumberId?: string;
  /** WhatsApp: the business account whose message templates are listed. */
  businessAccountId?: string;
}

export interface SentMessage {
  /** The app's id of the message (Telegram message_id, Discord id, WhatsApp wamid, Slack ts). */
  externalId: string;
  /** Where it went, as the app names it. */
  to: string;
}

const failed = (app: ChannelApp, why: string) => new DomainError('upstreamFailed', `${app} refused the call: ${why}`, 'CHANNEL_ERROR');
const unreachable = (app: ChannelApp) => new DomainError('unavailable', `${app} did not answer`, 'CHANNEL_UNAVAILABLE');

async function call(app: ChannelApp, url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(channelsConfig().timeoutMs),
      redirect: 'error',
    });
  } catch {
    throw unreachable(app);
  }
  const body: any = await res.json().catch(() => undefined);
  if (!res.ok) {
    const why = body?.description ?? body?.message ?? body?.error?.message ?? body?.error ?? `status ${res.status}`;
    throw failed(app, String(why).slice(0, 200));
  }
  return body;
}

const seg = encodeURIComponent;

const telegram = {
  method: (access: ChannelAccess, method: string, body?: unknown) =>
    call('telegram', `${channelsConfig().telegramUrl}/bot${access.token}/${method}`, { body }).then((b) => {
      if (b?.ok !== true) throw failed('telegram', String(b?.description ?? 'not ok'));
      return b.result;
    }),
};

const discordHeaders = (access: ChannelAccess) => ({ authorization: `Bot ${access.token}` });
const bearer = (access: ChannelAccess) => ({ authorization: `Bearer ${access.token}` });

async function slack(access: ChannelAccess, method: string, body: Record<string, unknown>) {
  const out = await call('slack', `${channelsConfig().slackUrl}/${method}`, { headers: bearer(access), body });
  if (out?.ok !== true) throw failed('slack', String(out?.error ?? 'not ok'));
  return out;
}

function phoneNumber(access: ChannelAccess): string {
  if (!access.phoneNumberId) throw new DomainError('invalid', 'connect the channel with its phoneNumberId first', 'CHANNEL_NOT_CONFIGURED');
  return access.phoneNumberId;
}

/** Sends a text message. */
export async function sendChannelMessage(app: ChannelApp, access: ChannelAccess, to: string, text: string): Promise<SentMessage> {
  switch (app) {
    case 'telegram': {
      const result = await telegram.method(access, 'sendMessage', { chat_id: to, text });
      return { externalId: String(result.message_id), to: String(result.chat?.id ?? to) };
    }
    case 'discord': {
      const out = await call('discord', `${channelsConfig().discordUrl}/channels/${seg(to)}/messages`, {
        headers: discordHeaders(access),
        body: { content: text },
      });
      return { externalId: String(out.id), to: String(out.channel_id ?? to) };
    }
    case 'whatsapp': {
      const out = await call('whatsapp', `${channelsConfig().whatsappUrl}/${seg(phoneNumber(access))}/messages`, {
        headers: bearer(access),
        body: { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { preview_url: false, body: text } },
      });
      return { externalId: String(out.messages?.[0]?.id), to: String(out.contacts?.[0]?.wa_id ?? to) };
    }
    case 'slack': {
      const out = await slack(access, 'chat.postMessage', { channel: to, text });
      return { externalId: String(out.ts), to: String(out.channel ?? to) };
    }
  }
}

/** WhatsApp: sends an approved message template (business-messaging-api). */
export async function sendWhatsappTemplate(
  access: ChannelAccess,
  to: string,
  template: { name: string; languageCode: string; parameters: string[] },
): Promise<SentMessage> {
  const components = template.parameters.length ? [{ type: 'body', parameters: template.parameters.map((text) => ({ type: 'text', text })) }] : [];
  const out = await call('whatsapp', `${channelsConfig().whatsappUrl}/${seg(phoneNumber(access))}/messages`, {
    headers: bearer(access),
    body: { messaging_product: 'whatsapp', to, type: 'template', template: { name: template.name, language: { code: template.languageCode }, components } },
  });
  return { externalId: String(out.messages?.[0]?.id), to: String(out.contacts?.[0]?.wa_id ?? to) };
}

/** WhatsApp: the business account's message templates. */
export async function listWhatsappTemplates(access: ChannelAccess) {
  if (!access.businessAccountId) throw new DomainError('invalid', 'connect the channel with its businessAccountId first', 'CHANNEL_NOT_CONFIGURED');
  const out = await call('whatsapp', `${channelsConfig().whatsappUrl}/${seg(access.businessAccountId)}/message_templates`, { headers: bearer(access) });
  return ((out.data ?? []) as any[]).map((t) => ({ id: String(t.id), name: String(t.name), language: t.language, status: t.status, category: t.category }));
}

/** What the app says about the bot or the channel (`target`: a Discord or Slack channel). */
export async function channelInfo(app: ChannelApp, access: ChannelAccess, target?: string): Promise<Record<string, unknown>> {
  switch (app) {
    case 'telegram': {
      const me = await telegram.method(access, 'getMe');
      return { botId: String(me.id), username: me.username, name: me.first_name };
    }
    case 'discord': {
      if (target) {
        const ch = await call('discord', `${channelsConfig().discordUrl}/channels/${seg(target)}`, { headers: discordHeaders(access) });
        return { channelId: String(ch.id), name: ch.name, guildId: ch.guild_id, type: ch.type };
      }
      const me = await call('discord', `${channelsConfig().discordUrl}/users/@me`, { headers: discordHeaders(access) });
      return { botId: String(me.id), username: me.username };
    }
    case 'whatsapp': {
      const out = await call('whatsapp', `${channelsConfig().whatsappUrl}/${seg(phoneNumber(access))}?fields=display_phone_number,verified_name`, {
        headers: bearer(access),
      });
      return { phoneNumberId: String(out.id), displayPhoneNumber: out.display_phone_number, verifiedName: out.verified_name };
    }
    case 'slack': {
      if (target) {
        const out = await slack(access, 'conversations.info', { channel: target });
        return { channelId: out.channel?.id, name: out.channel?.name, isPrivate: out.channel?.is_private };
      }
      const out = await slack(access, 'auth.test', {});
      return { team: out.team, teamId: out.team_id, botUserId: out.user_id };
    }
  }
}

/** Telegram: points the bot's updates at the platform's inbound route with the secret it must echo. */
export async function setTelegramWebhook(access: ChannelAccess, url: string, secretToken: string): Promise<void> {
  await telegram.method(access, 'setWebhook', { url, secret_token: secretToken, allowed_updates: ['message'] });
}

// ---- Inbound: each app's own proof that a request comes from it ----

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);
const hmacHex = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');

/** A shared secret as given back by the app (in constant time). */
export const sameSecret = (given: string | undefined, secret: string) => !!given && sameBytes(Buffer.from(given), Buffer.from(secret));
/** Telegram echoes the `secret_token` given to setWebhook in `X-Telegram-Bot-Api-Secret-Token`. */
export const telegramSecretValid = sameSecret;

/** Meta signs the raw body with the app secret: `X-Hub-Signature-256: sha256=<hex>`. */
export function whatsappSignatureValid(rawBody: string, header: string | undefined, appSecret: string): boolean {
  if (!header?.startsWith('sha256=')) return false;
  return sameBytes(Buffer.from(header.slice(7)), Buffer.from(hmacHex(appSecret, rawBody)));
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC of "v0:<timestamp>:<body>">`, timestamp within five minutes. */
export const SLACK_TOLERANCE_SECONDS = 300;
export function slackSignatureValid(
  rawBody: string,
  timestamp: string | undefined,
  header: string | undefined,
  signingSecret: string,
  now = Date.now(),
): boolean {
  if (!timestamp || !header?.startsWith('v0=') || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > SLACK_TOLERANCE_SECONDS) return false;
  return sameBytes(Buffer.from(header), Buffer.from(`v0=${hmacHex(signingSecret, `v0:${timestamp}:${rawBody}`)}`));
}

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the application's key is the 32 raw bytes after it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Discord signs `timestamp + body` with the application's Ed25519 key (`X-Signature-Ed25519`, `X-Signature-Timestamp`). */
export function discordSignatureValid(rawBody: string, timestamp: string | undefined, signatureHex: string | undefined, publicKeyHex: string): boolean {
  if (!timestamp || !signatureHex || !/^[0-9a-f]{128}$/i.test(signatureHex) || !/^[0-9a-f]{64}$/i.test(publicKeyHex)) return false;
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
  return verify(null, Buffer.from(timestamp + rawBody), key, Buffer.from(signatureHex, 'hex'));
}
