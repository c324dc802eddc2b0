import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { runtimeLineFields } from '#adapters/launcher';
import { type LogStreamEvent, readLogStreamBack, runtimeLogStreamOf, runtimeLogsInCloudWatch } from '#adapters/runtime-logs-cloudwatch';
import type { AuthContext } from '#domain/auth/authenticate';
import { AGENT_LOG_RETENTION_DAYS } from '#contract/agent-logs';
import { type AgentLogEntry, agentLogPage, collectBack, type PageBack, type RuntimeLine, type RuntimeLineReader, storedRuntimeLines } from '#data/agent-log';
import { getInstance } from '#data/instances';
import { StreamReply } from '#http/reply';
import { ownAgent } from '#domain/agents/read';

const DAY_MS = 86_400_000;
/** Stream pages read per store read at most: a stream crowded with the other agents' lines is cut there, not read to its start. */
const MAX_STREAM_PAGES = 10;
const STREAM_PAGE_EVENTS = 100;

/** A CloudWatch event as a log line; its id is derived from what CloudWatch keeps, so it is the same on every read. */
function streamLine(stream: string, e: LogStreamEvent): RuntimeLine {
  const fields = runtimeLineFields(e.message);
  const digest = createHash('sha256').update(`${stream}\n${e.timestamp}\n${e.ingestionTime}\n${e.message}`).digest('hex');
  // awslogs merges stdout and stderr: a JSON line with a level is the runtime's own report, the rest is output.
  return {
    id: `cw_${digest.slice(0, 24)}`,
    at: new Date(e.timestamp).toISOString(),
    stream: fields.level ? 'runtime' : 'stdout',
    line: fields.line,
    level: fields.level ?? null,
    agentId: fields.agentId ?? null,
  };
}

/**
 * In AWS the runtime's output is in CloudWatch Logs (the task's awslogs stream): read backwards
 * from the page's position over the retention window. An instance that is not an ECS task has none.
 */
function cloudWatchLines(taskArn: string | undefined): RuntimeLineReader {
  return async (limit, from, keep) => {
    if (!taskArn) return [];
    const now = Date.now();
    const stream = runtimeLogStreamOf(taskArn);
    // endTime is exclusive: one millisecond more keeps the lines that share the cursor's time (the id tells them apart).
    const range = { startTime: now - AGENT_LOG_RETENTION_DAYS * DAY_MS, endTime: from ? Date.parse(from.at) + 1 : now + 1 };
    if (range.endTime <= range.startTime) return [];
    let pages = 0;
    const page: PageBack<RuntimeLine> = async (token) => {
      pages += 1;
      const out = await readLogStreamBack(stream, range, Math.max(limit, STREAM_PAGE_EVENTS), token as string | undefined);
      return { items: out.events.map((e) => streamLine(stream, e)), next: pages < MAX_STREAM_PAGES ? out.next : undefined };
    };
    return collectBack(page, limit, from, keep, (l) => l);
  };
}

/** Where this account's runtime lines are: CloudWatch Logs when the stack says so, else the table. */
async function runtimeLinesOf(userId: string): Promise<RuntimeLineReader> {
  if (!runtimeLogsInCloudWatch()) return storedRuntimeLines(userId);
  const handle = (await getInstance(userId))?.handle;
  return cloudWatchLines(handle?.launcher === 'ecs' ? handle.id : undefined);
}

/** How often a followed log looks for new entries. */
const FOLLOW_POLL_MS = 1000;

const wantsStream = (accept: string | undefined) => !!accept && /(^|,)\s*text\/event-stream/i.test(accept);

interface LogQuery {
  limit: number;
  cursor?: string;
  follow: number;
}

/** `GET /api/agents/{id}/logs`: a page of the merged log, or the same as server-sent events. */
export async function agentLogs(auth: AuthContext, agentId: string, query: LogQuery, accept: string | undefined) {
  const [, runtimeLines] = await Promise.all([ownAgent(auth, agentId), runtimeLinesOf(auth.userId)]);
  const page = await agentLogPage(auth.userId, agentId, query.limit, query.cursor, runtimeLines);
  if (!wantsStream(accept)) return page;
  return new StreamReply(logEvents(auth.userId, agentId, page, query.follow, runtimeLines));
}

/** The page oldest first, then every newer entry until `follow` seconds have passed, then `end`. */
async function* logEvents(
  userId: string,
  agentId: string,
  page: { entries: AgentLogEntry[]; cursor: string | null },
  followSeconds: number,
  runtimeLines: RuntimeLineReader,
) {
  const seen = [...page.entries].reverse();
  for (const entry of seen) yield { event: 'entry', data: entry };
  let newest = seen.at(-1);
  const until = Date.now() + followSeconds * 1000;
  while (Date.now() < until) {
    await sleep(Math.min(FOLLOW_POLL_MS, Math.max(0, until - Date.now())));
    for (const entry of await entriesAfter(userId, agentId, newest, runtimeLines)) {
      yield { event: 'entry', data: entry };
      newest = entry;
    }
  }
  yield { event: 'end', data: { cursor: page.cursor } };
}

/** Entries newer than `after`, oldest first (read newest first, page by page, back to it). */
async function entriesAfter(userId: string, agentId: string, after: AgentLogEntry | undefined, runtimeLines: RuntimeLineReader): Promise<AgentLogEntry[]> {
  const found: AgentLogEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await agentLogPage(userId, agentId, 50, cursor, runtimeLines);
    for (const entry of page.entries) {
      if (after && (entry.at < after.at || (entry.at === after.at && entry.id <= after.id))) return found.reverse();
      found.push(entry);
    }
    if (!page.cursor || !after) return found.reverse();
    cursor = page.cursor;
  }
}
