import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Chat sessions of `/api/agent`: conversation threads with one agent, at `USER#<id> / CHATSESS#<sessionId>`,
 * and their messages at `CHATSESSMSG#<sessionId>#<ISO time>#<message id>`. Session ids start with
 * their creation time in fixed-width base 36, so the partition's sort order is creation order.
 */
export interface ChatSessionRecord {
  id: string;
  agentId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
}

export interface SessionMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  createdAt: string;
}

/** 9 base-36 digits hold every millisecond time until the year 5188. */
const newSessionId = (now: Date) => `ses_${now.getTime().toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;

const view = (item: ChatSessionRecord): ChatSessionRecord => ({
  id: item.id,
  agentId: item.agentId,
  title: item.title,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
  messageCount: Number(item.messageCount ?? 0),
});

/** Opens a session with an owned agent; undefined when the agent is not in the caller's partition. */
export async function createChatSession(userId: string, agentId: string, title: string, now = new Date()): Promise<ChatSessionRecord | undefined> {
  const at = now.toISOString();
  const session: ChatSessionRecord = { id: newSessionId(now), agentId, title, createdAt: at, updatedAt: at, messageCount: 0 };
  try {
    await transactRetrying([
      tx.conditionCheck(keys.agent(userId, agentId), { expression: 'attribute_exists(pk)' }),
      tx.put({ ...keys.chatSession(userId, session.id), ...session }, { expression: 'attribute_not_exists(pk)' }),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return undefined;
    throw err;
  }
  return session;
}

export async function getChatSession(userId: string, sessionId: string, consistent = false): Promise<ChatSessionRecord | undefined> {
  const item = await tenant(userId).get<ChatSessionRecord & Record<string, unknown>>(keys.chatSession(userId, sessionId), consistent);
  return item && view(item);
}

/**
 * One page of sessions, newest first, optionally of one agent. `cursor` is the id of the last
 * session of the previous page; the filter is applied page by page until the page is full.
 */
export async function listChatSessions(userId: string, opts: { agentId?: string; limit: number; cursor?: string }) {
  const pk = keys.userPartition(userId);
  const sessions: ChatSessionRecord[] = [];
  let start: Record<string, unknown> | undefined = opts.cursor ? { ...keys.chatSession(userId, opts.cursor) } : undefined;
  let more = true;
  while (more && sessions.length <= opts.limit) {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(opts.agentId ? { FilterExpression: 'agentId = :agentId' } : {}),
        ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.chatSessionPrefix, ...(opts.agentId ? { ':agentId': opts.agentId } : {}) },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
        Limit: opts.limit + 1 - sessions.length,
      }),
    );
    sessions.push(...((out.Items ?? []) as ChatSessionRecord[]).map(view));
    start = out.LastEvaluatedKey;
    more = !!start;
  }
  const page = sessions.slice(0, opts.limit);
  return { sessions: page, nextCursor: sessions.length > opts.limit ? page.at(-1)!.id : null };
}

/** The newest `limit` messages of a session, oldest first. */
export async function sessionMessages(userId: string, sessionId: string, limit: number): Promise<SessionMessage[]> {
  const out = await tenant(userId).query<SessionMessage & Record<string, unknown>>(keys.chatSessionMessagePrefix(sessionId), { newestFirst: true, limit });
  return out.items.map(({ id, role, content, createdAt }) => ({ id, role, content, createdAt })).reverse();
}

/**
 * Adds the messages of one exchange to a session and moves its count and update time, in one
 * transaction; false when the session no longer exists.
 */
export async function appendSessionMessages(userId: string, sessionId: string, messages: SessionMessage[], now = new Date()): Promise<boolean> {
  try {
    await transactRetrying([
      tx.update(
        keys.chatSession(userId, sessionId),
        { expression: 'ADD messageCount :n SET updatedAt = :at', values: { ':n': messages.length, ':at': now.toISOString() } },
        { expression: 'attribute_exists(pk)' },
      ),
      ...messages.map((m) => tx.put({ ...keys.chatSessionMessage(userId, sessionId, `${m.createdAt}#${m.id}`), sessionId, ...m })),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}
