import { randomBytes } from 'node:crypto';
import type { ChannelAccess, ChannelApp } from '#adapters/channels';
import { decrypt, encrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import { DomainError } from '#platform/errors';
import * as keys from '../keys';
import { outboundCountUpdate } from '../metrics';
import { ConditionFailedError, getGlobal, tenant, transact, tx } from '../tenant';
import { giveBack, reserveWithin, totalOf } from './daily-counter';

/**
 * Channel skills: one connection per messaging app and account. A channel's token is the one
 * `POST /api/provision` stored for an agent (`CHANNELS#<agentId>`, envelope-encrypted) unless a
 * `connect` stored one of its own the same way; either is decrypted only to make a call. The
 * inbound secret (Telegram's webhook secret, WhatsApp's app secret, Slack's signing secret) is
 * sealed too; Discord's public key is no secret.
 */

/** The provisioning field of each app's token (`channelTokens.<field>`); Slack is never provisioned. */
const PROVISIONED_FIELD: Record<ChannelApp, string | undefined> = {
  telegram: 'chatBot',
  discord: 'communityBot',
  whatsapp: 'businessMessaging',
  slack: undefined,
};

const TOKEN_PURPOSE = 'channel-token';
const SECRET_PURPOSE = 'channel-inbound-secret';
const VERIFY_PURPOSE = 'channel-verify-token';

export interface ChannelConnection extends Record<string, unknown> {
  app: ChannelApp;
  hookId: string;
  agentId: string | null;
  token?: EnvelopeRecord;
  inboundSecret?: EnvelopeRecord;
  /** WhatsApp: the verify token Meta sends with its subscription check (GET `hub.verify_token`). */
  verifyToken?: EnvelopeRecord;
  defaultTarget?: string;
  phoneNumberId?: string;
  businessAccountId?: string;
  publicKey?: string;
  connectedAt: string;
  updatedAt: string;
}

export interface ConnectionChange {
  agentId?: string;
  token?: string;
  inboundSecret?: string;
  verifyToken?: string;
  defaultTarget?: string;
  phoneNumberId?: string;
  businessAccountId?: string;
  publicKey?: string;
}

export const getConnection = (userId: string, app: ChannelApp) => tenant(userId).get<ChannelConnection>(keys.channelConnection(userId, app), true);

interface ProvisionedChannels extends Record<string, unknown> {
  agentId: string;
  channelTokens?: Record<string, EnvelopeRecord>;
}

/** The provisioned token of the app: the preferred agent's, else the newest agent's that has one. */
async function provisionedToken(userId: string, app: ChannelApp, preferredAgent?: string | null) {
  const field = PROVISIONED_FIELD[app];
  if (!field) return undefined;
  const records = await tenant(userId).queryAll<ProvisionedChannels>(keys.channelProvisionPrefix);
  const withToken = records.filter((r) => r.channelTokens?.[field]);
  const chosen = withToken.find((r) => r.agentId === preferredAgent) ?? withToken.at(-1);
  return chosen ? { agentId: chosen.agentId, token: chosen.channelTokens![field]! } : undefined;
}

const open = async (userId: string, record: EnvelopeRecord, purpose: string) => (await decrypt(record, { userId, purpose })).toString('utf8');

/** Where the token of a connection comes from, without opening it. */
export async function tokenSource(userId: string, app: ChannelApp, connection?: ChannelConnection): Promise<'connected' | 'provisioned' | null> {
  if (connection?.token) return 'connected';
  return (await provisionedToken(userId, app, connection?.agentId)) ? 'provisioned' : null;
}

/** The account's plan lets it connect no more messaging apps. */
export class ChannelConnectionLimitError extends DomainError {
  constructor(
    readonly current: number,
    limit: number,
  ) {
    super('limitReached', `the plan connects at most ${limit} messaging app${limit === 1 ? '' : 's'}`, 'CHANNEL_LIMIT', { current, limit });
  }
}

export const connectedChannels = async (userId: string) =>
  Number((await tenant(userId).get<{ connected?: number }>(keys.channelCount(userId), true))?.connected ?? 0);

export const reserveChannelMessage = (userId: string, day: string, limit: number) => reserveWithin(userId, keys.channelDay(userId, day), 'sent', 1, limit);
export const giveBackChannelMessage = (userId: string, day: string) => giveBack(userId, keys.channelDay(userId, day), 'sent', 1);
export const channelMessagesOn = (userId: string, day: string) => totalOf(userId, keys.channelDay(userId, day), 'sent');

export const newHookId = () => `hook_${randomBytes(16).toString('hex')}`;

/**
 * Stores or updates the app's connection (its hook made on first connect, or `hookId` when the
 * caller registered one with the app before saving); secrets sealed.
 */
export async function saveConnection(
  userId: string,
  app: ChannelApp,
  change: ConnectionChange,
  now: Date,
  opts: { current?: ChannelConnection; hookId?: string; connectionLimit?: number } = {},
): Promise<ChannelConnection> {
  const current = opts.current ?? (await getConnection(userId, app));
  const provisioned = change.token ? undefined : await provisionedToken(userId, app, change.agentId ?? current?.agentId);
  if (!change.token && !current?.token && !provisioned) throw tokenRequired(app);
  const { token, inboundSecret, verifyToken, agentId, ...plain } = change;
  const next: ChannelConnection = {
    ...(current ?? { app, hookId: opts.hookId ?? newHookId(), connectedAt: now.toISOString() }),
    ...Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined)),
    agentId: agentId ?? current?.agentId ?? provisioned?.agentId ?? null,
    updatedAt: now.toISOString(),
  } as ChannelConnection;
  if (token) next.token = await encrypt(token, { userId, purpose: TOKEN_PURPOSE });
  if (inboundSecret) next.inboundSecret = await encrypt(inboundSecret, { userId, purpose: SECRET_PURPOSE });
  if (verifyToken) next.verifyToken = await encrypt(verifyToken, { userId, purpose: VERIFY_PURPOSE });
  const { pk: _pk, sk: _sk, ...item } = next as ChannelConnection & { pk?: string; sk?: string };
  if (current) {
    await transact([tx.put({ ...keys.channelConnection(userId, app), ...item })]);
    return next;
  }
  // A new app: the connection, its hook and the account's count of connected apps, all or nothing;
  // the count only grows within the plan's limit, so racing connects cannot pass it together.
  const limit = opts.connectionLimit ?? Number.MAX_SAFE_INTEGER;
  try {
    await transact([
      tx.put({ ...keys.channelConnection(userId, app), ...item }, { expression: 'attribute_not_exists(pk)' }),
      tx.put({ ...keys.channelHook(next.hookId), userId, app }, { expression: 'attribute_not_exists(pk)' }),
      tx.update(
        keys.channelCount(userId),
        { expression: 'ADD connected :one', values: { ':one': 1 } },
        { expression: 'attribute_not_exists(connected) OR connected < :limit', values: { ':limit': limit } },
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons?.[2] === 'ConditionalCheckFailed')
      throw new ChannelConnectionLimitError(await connectedChannels(userId), limit);
    if (err instanceof ConditionFailedError) throw new DomainError('conflict', `another connect of ${app} ran at the same time, try again`, 'CHANNEL_BUSY');
    throw err;
  }
  return next;
}

/**
 * Removes the app's connection, its inbound hook (so the app's posts to it are refused from then
 * on) and its place in the account's count, all or nothing; false when the app was not connected.
 */
export async function deleteConnection(userId: string, app: ChannelApp): Promise<boolean> {
  const current = await getConnection(userId, app);
  if (!current) return false;
  try {
    await transact([
      tx.delete(keys.channelConnection(userId, app), { expression: 'hookId = :hook', values: { ':hook': current.hookId } }),
      tx.delete(keys.channelHook(current.hookId)),
      tx.update(keys.channelCount(userId), { expression: 'ADD connected :minus', values: { ':minus': -1 } }),
    ]);
    return true;
  } catch (err) {
    // Removed (or replaced) by a concurrent call: what is stored now is that call's to settle.
    if (err instanceof ConditionFailedError && err.reasons?.[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}

/** The decrypted access to the app, for one call; undefined when the account has no token for it. */
export async function channelAccess(userId: string, app: ChannelApp, connection?: ChannelConnection): Promise<ChannelAccess | undefined> {
  const conn = connection ?? (await getConnection(userId, app));
  const sealed = conn?.token ? { record: conn.token, purpose: TOKEN_PURPOSE } : undefined;
  let token: string | undefined;
  if (sealed) token = await open(userId, sealed.record, sealed.purpose);
  else {
    const provisioned = await provisionedToken(userId, app, conn?.agentId);
    if (provisioned) token = await open(userId, provisioned.token, TOKEN_PURPOSE);
  }
  if (!token) return undefined;
  return { token, phoneNumberId: conn?.phoneNumberId, businessAccountId: conn?.businessAccountId };
}

const tokenRequired = (app: ChannelApp) =>
  new DomainError('invalid', `no ${app} token was provisioned for this account: give one in \`token\``, 'CHANNEL_TOKEN_REQUIRED');

/**
 * The access a connect would use, before anything is saved: the token given to it, else the
 * stored or provisioned one of the agent it names. CHANNEL_TOKEN_REQUIRED when there is none.
 */
export async function accessForConnect(userId: string, app: ChannelApp, current: ChannelConnection | undefined, change: ConnectionChange) {
  if (change.token)
    return {
      token: change.token,
      phoneNumberId: change.phoneNumberId ?? current?.phoneNumberId,
      businessAccountId: change.businessAccountId ?? current?.businessAccountId,
    };
  const access = await channelAccess(userId, app, { ...(current ?? ({ app } as ChannelConnection)), agentId: change.agentId ?? current?.agentId ?? null });
  if (!access) throw tokenRequired(app);
  return access;
}

export const verifyTokenOf = async (userId: string, connection: ChannelConnection) =>
  connection.verifyToken ? open(userId, connection.verifyToken, VERIFY_PURPOSE) : undefined;

export const inboundSecretOf = async (userId: string, connection: ChannelConnection) =>
  connection.inboundSecret ? open(userId, connection.inboundSecret, SECRET_PURPOSE) : undefined;

/** The account and app an inbound route's hook belongs to. */
export const hookOwner = (hookId: string) => getGlobal<{ userId: string; app: ChannelApp }>(keys.channelHook(hookId), true);

// ---- Messages sent and received ----

export interface ChannelMessage {
  messageId: string;
  app: ChannelApp;
  skill: string;
  direction: 'in' | 'out';
  /** Outbound: where it went; inbound: the conversation it came from (a reply goes there). */
  conversation: string;
  /** Inbound: who wrote it, as the app names them. */
  from?: string;
  text: string;
  externalId: string;
  at: string;
  /** Inbound: what became of it (`answered`, or why the agent did not see it). */
  agent?: string;
  /** Outbound on behalf of a scheduled post. */
  postId?: string;
}

/**
 * Stores a message under its time; `at` and `messageId` of an inbound message come from the app
 * (its own timestamp and id), so a redelivered webhook finds it stored and is not taken twice.
 * Returns false when it was already there.
 */
export async function recordMessage(userId: string, message: ChannelMessage): Promise<boolean> {
  try {
    const put = tx.put(
      { ...keys.channelMessage(userId, message.app, `${message.at}#${message.messageId}`), ...message },
      { expression: 'attribute_not_exists(pk)' },
    );
    // A message sent through the app counts as a message sent that month, with its record.
    await transact(message.direction === 'out' ? [put, outboundCountUpdate(userId, message.at, { channelMessages: 1 })] : [put]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** What became of an inbound message once the agent was asked. */
export async function markInbound(userId: string, message: ChannelMessage, outcome: string): Promise<void> {
  await tenant(userId).update(keys.channelMessage(userId, message.app, `${message.at}#${message.messageId}`), {
    expression: 'SET #agent = :outcome',
    names: { '#agent': 'agent' },
    values: { ':outcome': outcome },
  });
}

/** Newest first. */
export async function recentMessages(userId: string, app: ChannelApp, limit: number, filter: { direction?: 'in' | 'out'; skill?: string } = {}) {
  const { items } = await tenant(userId).query<ChannelMessage & Record<string, unknown>>(keys.channelMessagePrefix(app), { newestFirst: true, limit: 500 });
  return items
    .filter((m) => (!filter.direction || m.direction === filter.direction) && (!filter.skill || m.skill === filter.skill))
    .slice(0, limit)
    .map(({ pk: _pk, sk: _sk, ...m }) => m as ChannelMessage);
}

export const newMessageId = () => `msg_${randomBytes(8).toString('hex')}`;
