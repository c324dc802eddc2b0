import { setTimeout as sleep } from 'node:timers/promises';
import type { AuthContext } from '../../shared/auth/authenticate';
import { type AgentLogEntry, agentLogPage } from '../../shared/db/agent-log';
import { StreamReply } from '../../shared/http/reply';
import { ownAgent } from './read';

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
  await ownAgent(auth, agentId);
  const page = await agentLogPage(auth.userId, agentId, query.limit, query.cursor);
  if (!wantsStream(accept)) return page;
  return new StreamReply(logEvents(auth.userId, agentId, page, query.follow));
}

/** The page oldest first, then every newer entry until `follow` seconds have passed, then `end`. */
async function* logEvents(userId: string, agentId: string, page: { entries: AgentLogEntry[]; cursor: string | null }, followSeconds: number) {
  const seen = [...page.entries].reverse();
  for (const entry of seen) yield { event: 'entry', data: entry };
  let newest = seen.at(-1);
  const until = Date.now() + followSeconds * 1000;
  while (Date.now() < until) {
    await sleep(Math.min(FOLLOW_POLL_MS, Math.max(0, until - Date.now())));
    for (const entry of await entriesAfter(userId, agentId, newest)) {
      yield { event: 'entry', data: entry };
      newest = entry;
    }
  }
  yield { event: 'end', data: { cursor: page.cursor } };
}

/** Entries newer than `after`, oldest first (read newest first, page by page, back to it). */
async function entriesAfter(userId: string, agentId: string, after: AgentLogEntry | undefined): Promise<AgentLogEntry[]> {
  const found: AgentLogEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await agentLogPage(userId, agentId, 50, cursor);
    for (const entry of page.entries) {
      if (after && (entry.at < after.at || (entry.at === after.at && entry.id <= after.id))) return found.reverse();
      found.push(entry);
    }
    if (!page.cursor || !after) return found.reverse();
    cursor = page.cursor;
  }
}
