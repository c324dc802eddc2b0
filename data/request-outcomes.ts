import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import { queryEvery } from './tenant';

/**
 * What the API answered, for the platform's public uptime and success rate (`GET /api/metrics`).
 *
 * Every request the pipeline answers is noted here, in memory; the container adds its notes to one
 * counter item per UTC minute, `COUNTER / requests#<yyyy-mm-ddThh:mm>` {total, failed (5xx),
 * msTotal}, with one `UpdateItem ADD` once REQUEST_FLUSH_EVERY answers are pending or
 * REQUEST_FLUSH_MS passed since its last write (the first answer of a container writes at once).
 * So a request costs no round trip of its own: one in REQUEST_FLUSH_EVERY, or one every
 * REQUEST_FLUSH_MS on a quiet container, carries the write (1 WCU). An item takes at most one
 * write per container per REQUEST_FLUSH_EVERY answers or REQUEST_FLUSH_MS, far under DynamoDB's
 * 1,000 writes a second on one item until about 100,000 requests a second platform-wide.
 *
 * What this cannot see: answers a container noted but never wrote because it was never invoked
 * again (at most REQUEST_FLUSH_EVERY - 1 answers or REQUEST_FLUSH_MS of one container), and
 * failures before the function ran (API Gateway throttling, a Lambda timeout or crash), which
 * CloudWatch's API Gateway metrics count instead.
 */

/**
 * The answer that carries the write pays its round trip's CPU, so a frequent flush would put that
 * cost into the tail latency of every warm route; written this rarely, it stays out of the
 * percentiles the bench reports (bench/results.json). A busy container still writes every
 * REQUEST_FLUSH_MS, so what it can lose stays within that time.
 */
export const REQUEST_FLUSH_EVERY = 1000;
export const REQUEST_FLUSH_MS = 10_000;
/** Minute items outlive the 24-hour window the figures read by a day. */
const MINUTE_TTL_SECONDS = 2 * 86_400;
/** While the table cannot be written, notes wait; past this many minutes the oldest are dropped. */
const MAX_PENDING_MINUTES = 24 * 60;

export interface MinuteOutcomes {
  total: number;
  /** Answered with a 5xx status. */
  failed: number;
  /** Sum of the pipeline's measured durations, ms. */
  msTotal: number;
}

let lastMinute = { startMs: Number.NaN, label: '' };

/** `yyyy-mm-ddThh:mm`, UTC. Formatted once per minute, not per answer: every request notes its minute. */
export function utcMinute(at: number | Date): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  const startMs = Math.floor(ms / 60_000) * 60_000;
  if (startMs !== lastMinute.startMs) lastMinute = { startMs, label: new Date(startMs).toISOString().slice(0, 16) };
  return lastMinute.label;
}
const minuteKey = (minute: string) => keys.counter(`requests#${minute}`);

const pending = new Map<string, MinuteOutcomes>();
let pendingCount = 0;
let lastWriteAt = Number.NEGATIVE_INFINITY;

function add(minute: string, o: MinuteOutcomes) {
  const into = pending.get(minute) ?? { total: 0, failed: 0, msTotal: 0 };
  pending.set(minute, { total: into.total + o.total, failed: into.failed + o.failed, msTotal: into.msTotal + o.msTotal });
}

/** Notes one answer; true when the container should write its notes now (`flushRequestOutcomes`). */
export function noteRequestOutcome(status: number, ms: number, now = Date.now()): boolean {
  add(utcMinute(now), { total: 1, failed: status >= 500 ? 1 : 0, msTotal: Math.max(0, Math.round(ms)) });
  pendingCount += 1;
  return pendingCount >= REQUEST_FLUSH_EVERY || now - lastWriteAt >= REQUEST_FLUSH_MS;
}

/**
 * Adds the pending notes to their minute items (usually one; in parallel when a flush spans a
 * minute's end). A failed write keeps its notes for the next flush, then the error is thrown.
 */
export async function flushRequestOutcomes(now = Date.now()): Promise<void> {
  if (!pending.size) return;
  const batch = [...pending];
  pending.clear();
  pendingCount = 0;
  lastWriteAt = now;
  const expiresAt = Math.floor(now / 1000) + MINUTE_TTL_SECONDS;
  const failures: unknown[] = [];
  await Promise.all(
    batch.map(async ([minute, o]) => {
      try {
        await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: minuteKey(minute),
            UpdateExpression: 'ADD #total :total, #failed :failed, #ms :ms SET expiresAt = :exp',
            ExpressionAttributeNames: { '#total': 'total', '#failed': 'failed', '#ms': 'msTotal' },
            ExpressionAttributeValues: { ':total': o.total, ':failed': o.failed, ':ms': o.msTotal, ':exp': expiresAt },
          }),
        );
      } catch (err) {
        // Kept, but not counted towards the next write: that waits REQUEST_FLUSH_MS or as many new answers, so a table in trouble is not asked again at once.
        add(minute, o);
        failures.push(err);
      }
    }),
  );
  while (pending.size > MAX_PENDING_MINUTES) pending.delete(pending.keys().next().value!);
  if (failures.length) throw failures[0];
}

/** Tests: forget what this process noted and never wrote. */
export function discardPendingRequestOutcomes(): void {
  pending.clear();
  pendingCount = 0;
  lastWriteAt = Number.NEGATIVE_INFINITY;
}

/** The minute items of [from, to] (UTC minutes, inclusive), keyed by minute. */
export async function requestOutcomesBetween(from: Date, to: Date): Promise<Map<string, MinuteOutcomes>> {
  const items = await queryEvery<Record<string, unknown>>({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': keys.counterPartition, ':from': minuteKey(utcMinute(from)).sk, ':to': minuteKey(utcMinute(to)).sk },
    ProjectionExpression: 'sk, #total, #failed, #ms',
    ExpressionAttributeNames: { '#total': 'total', '#failed': 'failed', '#ms': 'msTotal' },
  });
  const out = new Map<string, MinuteOutcomes>();
  for (const item of items) {
    out.set(String(item.sk).slice('requests#'.length), {
      total: Number(item.total ?? 0),
      failed: Number(item.failed ?? 0),
      msTotal: Number(item.msTotal ?? 0),
    });
  }
  return out;
}
