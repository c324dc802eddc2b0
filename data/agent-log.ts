import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import type { LifecycleEvent } from './lifecycle-events';
import { InvalidCursorError, tenant } from './tenant';
import type { RuntimeLogLineInput } from '#adapters/launcher';

/**
 * The per-agent log (`GET /api/agents/{id}/logs`): one time line merged from three stores of the
 * account's partition, newest first:
 * - `RTLOG#…` runtime log lines of the instance (what the runtime reports, or what the launcher
 *   captures from its stdout/stderr); lines that name no agent belong to every agent of the instance;
 * - `LCEVENT#…` lifecycle events of the agent and of its instance;
 * - `MSG#<agentId>#…` the agent's message exchanges.
 * A page's cursor is the (time, id) of its last entry; each store is read from there backwards.
 */

/** Runtime lines are for debugging what happened recently, not an archive. */
const RUNTIME_LOG_TTL_SECONDS = 7 * 24 * 3600;
export const RUNTIME_LOG_LINE_MAX_CHARS = 4000;

export type AgentLogEntry =
  | { id: string; at: string; kind: 'runtime'; stream: RuntimeLogLineInput['stream']; level: string | null; line: string }
  | { id: string; at: string; kind: 'message'; role: 'user' | 'assistant' | 'system'; content: string }
  | {
      id: string;
      at: string;
      kind: 'lifecycle';
      type: string;
      op: string | null;
      status: string | null;
      reason: string | null;
      operationId: string | null;
    };

/** Stores runtime log lines of an account's instance (bounded length, kept 7 days). */
export async function appendRuntimeLogLines(userId: string, lines: RuntimeLogLineInput[], now = new Date()): Promise<void> {
  const store = tenant(userId);
  const expiresAt = Math.floor(now.getTime() / 1000) + RUNTIME_LOG_TTL_SECONDS;
  await Promise.all(
    lines.map((l, seq) => {
      const at = l.at ?? now.toISOString();
      const id = `log_${randomBytes(10).toString('hex')}`;
      const item = {
        stream: l.stream,
        line: l.line.slice(0, RUNTIME_LOG_LINE_MAX_CHARS),
        level: l.level ?? null,
        agentId: l.agentId ?? null,
        id,
        at,
        expiresAt,
      };
      return store.put({ ...keys.runtimeLogLine(userId, `${at}#${String(seq).padStart(4, '0')}#${id}`), ...item });
    }),
  );
}

export interface Position {
  at: string;
  id: string;
}

export const before = (a: Position, b: Position) => a.at < b.at || (a.at === b.at && a.id < b.id);
const newestFirst = (a: Position, b: Position) => (before(a, b) ? 1 : before(b, a) ? -1 : 0);

export const encodeLogCursor = (p: Position) => Buffer.from(JSON.stringify([p.at, p.id])).toString('base64url');

function decodeLogCursor(cursor: string): Position {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && typeof id === 'string' && at.length <= 40 && id.length <= 64) return { at, id };
  } catch {}
  throw new InvalidCursorError();
}

/** One page of a store read newest first, and how to ask for the next (older) one; no `next` at the end. */
export type PageBack<T> = (next: unknown) => Promise<{ items: T[]; next?: unknown }>;

/**
 * Up to `limit` items of one store strictly before `from` (newest first) that `keep` accepts, plus
 * the ones sharing the last one's time, so merging stores never skips an entry at a page edge.
 */
export async function collectBack<T>(
  page: PageBack<T>,
  limit: number,
  from: Position | undefined,
  keep: (item: T) => boolean,
  position: (item: T) => Position,
): Promise<T[]> {
  const found: T[] = [];
  const lastAt = () => position(found.at(-1)!).at;
  let next: unknown;
  do {
    const out = await page(next);
    for (const item of out.items) {
      if (from && !before(position(item), from)) continue;
      if (!keep(item)) continue;
      if (found.length >= limit && position(item).at !== lastAt()) return found;
      found.push(item);
    }
    next = out.next;
  } while (next !== undefined);
  return found;
}

function readBack<T>(
  userId: string,
  prefix: string,
  limit: number,
  from: Position | undefined,
  keep: (item: T) => boolean,
  position: (item: T) => Position,
): Promise<T[]> {
  const page: PageBack<T> = async (start) => {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':from': prefix, ':to': `${prefix}${from ? from.at : ''}\uffff` },
        ScanIndexForward: false,
        Limit: Math.max(limit, 25),
        ExclusiveStartKey: start as Record<string, unknown> | undefined,
      }),
    );
    return { items: (out.Items ?? []) as T[], next: out.LastEvaluatedKey };
  };
  return collectBack(page, limit, from, keep, position);
}

/** A runtime log line as the per-agent log reads it, wherever it is kept. */
export interface RuntimeLine extends Position {
  stream: RuntimeLogLineInput['stream'];
  line: string;
  level: string | null;
  agentId: string | null;
}

/**
 * Where the instance's runtime lines are read from: up to `limit` lines strictly before `from`,
 * newest first, that `keep` accepts (collectBack's contract). The table (`RTLOG#`, what the local
 * launcher keeps) unless the caller reads another store (CloudWatch Logs in AWS).
 */
export type RuntimeLineReader = (limit: number, from: Position | undefined, keep: (line: RuntimeLine) => boolean) => Promise<RuntimeLine[]>;

export const storedRuntimeLines =
  (userId: string): RuntimeLineReader =>
  (limit, from, keep) =>
    readBack<RuntimeLine>(userId, keys.runtimeLogPrefix, limit, from, keep, (l) => l);

/** One page of an agent's log, newest first; `cursor` is null on the last page. */
export async function agentLogPage(
  userId: string,
  agentId: string,
  limit: number,
  cursor?: string,
  runtimeLines: RuntimeLineReader = storedRuntimeLines(userId),
): Promise<{ entries: AgentLogEntry[]; cursor: string | null }> {
  const from = cursor ? decodeLogCursor(cursor) : undefined;
  type Message = { id: string; role: 'user' | 'assistant' | 'system'; content: string; createdAt: string };
  // One more than the page from each store tells whether an older page exists.
  const wanted = limit + 1;
  const [lines, events, messages] = await Promise.all([
    runtimeLines(wanted, from, (l) => !l.agentId || l.agentId === agentId),
    readBack<LifecycleEvent>(
      userId,
      keys.lifecycleEventPrefix,
      wanted,
      from,
      (e) => !e.agentId || e.agentId === agentId,
      (e) => e,
    ),
    readBack<Message>(
      userId,
      keys.agentMessagePrefix(agentId),
      wanted,
      from,
      () => true,
      (m) => ({ at: m.createdAt, id: m.id }),
    ),
  ]);
  const entries: AgentLogEntry[] = [
    ...lines.map((l): AgentLogEntry => ({ id: l.id, at: l.at, kind: 'runtime', stream: l.stream, level: l.level ?? null, line: l.line })),
    ...events.map(
      (e): AgentLogEntry => ({
        id: e.id,
        at: e.at,
        kind: 'lifecycle',
        type: e.type,
        op: e.op ?? null,
        status: e.status ?? null,
        reason: e.reason ?? null,
        operationId: e.operationId ?? null,
      }),
    ),
    ...messages.map((m): AgentLogEntry => ({ id: m.id, at: m.createdAt, kind: 'message', role: m.role, content: m.content })),
  ].sort(newestFirst);
  const page = entries.slice(0, limit);
  return { entries: page, cursor: entries.length > limit ? encodeLogCursor(page.at(-1)!) : null };
}
