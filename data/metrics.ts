import { randomInt } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import * as keys from './keys';
import type { Key } from './keys';
import { queryEvery, tenant, transact, tx, type TransactItem } from './tenant';

/**
 * Metrics storage (spec 4.10).
 *
 * SAMPLES: one item per heartbeat of a running instance at `USER#<id> / METRIC#<iso>`, kept 35 days
 * (TTL): cpu and memory percent (null when the instance did not answer its stats), and what the
 * account's agents did since the previous sample (messages, errors, response time total).
 *
 * PLATFORM DAILY COUNTERS under `COUNTER`, sharded like the agent counters so writers rarely
 * contend, read back in one Query per family over O(days × shards) small items:
 * - `messages#<yyyy-mm-dd>#<shard>`: `count`, messages processed that UTC day. Incremented by
 *   whoever stores agent exchanges, in the same transaction (`messageCountUpdate`).
 * - `heartbeat#<yyyy-mm-dd>#<shard>`: `checks`, `reachable`, `healthy`, `messages`, `errors`,
 *   `responseMsTotal`, `answered`: the heartbeat's checks that day, written with each sample.
 */

export const DAILY_SHARDS = 8;
export const SAMPLE_TTL_DAYS = 35;

export interface SampleInput {
  timestamp: string;
  cpu: number | null;
  memory: number | null;
  messages: number;
  errors: number;
  /** Sum of the response times of the messages answered (messages - errors) in the interval. */
  responseMsTotal: number;
  /** The instance answered /health at all (the hosting layer was up) and answered it healthy. */
  reachable: boolean;
  healthy: boolean;
}

export interface MetricSample extends SampleInput, Record<string, unknown> {
  expiresAt: number;
}

export const utcDay = (d: Date) => d.toISOString().slice(0, 10);

const dailyKey = (family: 'messages' | 'heartbeat', day: string) => keys.counter(`${family}#${day}#${randomInt(DAILY_SHARDS)}`);

function addUpdate(key: Key, fields: Record<string, number>): TransactItem {
  const entries = Object.entries(fields);
  const names = Object.fromEntries(entries.map(([f], i) => [`#f${i}`, f]));
  const values = Object.fromEntries(entries.map(([, v], i) => [`:f${i}`, v]));
  return tx.update(key, { expression: 'ADD ' + entries.map((_, i) => `#f${i} :f${i}`).join(', '), names, values });
}

/**
 * The transaction item that counts `count` processed messages for the platform's message figures.
 * Add it to the transaction that stores the exchange, so the figures never disagree with history.
 */
export const messageCountUpdate = (count: number, now = new Date()): TransactItem | undefined =>
  count > 0 ? addUpdate(dailyKey('messages', utcDay(now)), { count }) : undefined;

/** Stores a sample and adds it to the platform's daily heartbeat figures, all or nothing. */
export async function recordSample(userId: string, sample: SampleInput): Promise<void> {
  const at = new Date(sample.timestamp);
  const item: MetricSample = { ...sample, expiresAt: Math.floor(at.getTime() / 1000) + SAMPLE_TTL_DAYS * 86_400 };
  const answered = Math.max(0, sample.messages - sample.errors);
  await transact([
    tx.put({ ...keys.metricSample(userId, sample.timestamp), ...item }, { expression: 'attribute_not_exists(pk)' }),
    addUpdate(dailyKey('heartbeat', utcDay(at)), {
      checks: 1,
      reachable: sample.reachable ? 1 : 0,
      healthy: sample.healthy ? 1 : 0,
      messages: sample.messages,
      errors: sample.errors,
      responseMsTotal: sample.responseMsTotal,
      answered,
    }),
  ]);
}

/**
 * A running instance found dead some other way than by its heartbeat (the ECS task stopped, the
 * local process exited) counts as one failed check in the platform's daily heartbeat figures, so
 * agent uptime falls with it: the transaction item to add to the write that marks it `error`.
 */
export const deadInstanceCheck = (now = new Date()): TransactItem => addUpdate(dailyKey('heartbeat', utcDay(now)), { checks: 1, reachable: 0, healthy: 0 });

const stillLive = (now: Date) => (s: MetricSample) => Number(s.expiresAt ?? Infinity) > now.getTime() / 1000;

/** The samples taken in [from, to], oldest first. */
export async function samplesBetween(userId: string, from: Date, to: Date): Promise<MetricSample[]> {
  const all = await tenant(userId).queryBetween<MetricSample>(keys.metricSample(userId, from.toISOString()).sk, keys.metricSample(userId, to.toISOString()).sk);
  return all.filter(stillLive(to));
}

/** The newest `count` samples, newest first. */
export async function latestSamples(userId: string, count: number, now = new Date()): Promise<MetricSample[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': keys.metricSamplePrefix },
      ScanIndexForward: false,
      Limit: count,
    }),
  );
  return ((out.Items ?? []) as MetricSample[]).filter(stillLive(now));
}

/** Sums the numeric fields of a daily counter family over [fromDay, toDay] (UTC days, inclusive). */
export async function sumDaily<F extends string>(family: 'messages' | 'heartbeat', fields: readonly F[], fromDay: string, toDay: string) {
  const perDay = new Map<string, Record<F, number>>();
  const items = await queryEvery<Record<string, unknown>>({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    // '~' sorts after '#' and every digit, so the last day's shards are all inside the range.
    ExpressionAttributeValues: { ':pk': keys.counterPartition, ':from': `${family}#${fromDay}`, ':to': `${family}#${toDay}~` },
  });
  for (const item of items) {
    const day = String(item.sk).split('#')[1]!;
    const totals = perDay.get(day) ?? (Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>);
    for (const f of fields) totals[f] += Number(item[f] ?? 0);
    perDay.set(day, totals);
  }
  return perDay;
}

let sizeCache: { bytes: number; at: number } | undefined;
const SIZE_CACHE_MS = 5 * 60_000;

/**
 * The table's size as DynamoDB reports it (AWS refreshes it about every six hours), cached per
 * container so a public endpoint never turns into a flood of control-plane calls.
 */
export async function tableSizeBytes(now = Date.now()): Promise<number> {
  if (sizeCache && now - sizeCache.at < SIZE_CACHE_MS) return sizeCache.bytes;
  const out = await db().send(new DescribeTableCommand({ TableName: tableName() }));
  const bytes = Number(out.Table?.TableSizeBytes ?? 0);
  sizeCache = { bytes, at: now };
  return bytes;
}

export const clearTableSizeCache = () => {
  sizeCache = undefined;
};

// --- money moved and messages sent, per account and month ---------------------------------------

/**
 * `USER#<id> / OUTBOUND#<yyyy-mm>`: what the account's skills moved and sent that month, added in
 * the same transaction as the record that proves it, so a recount of the records always matches:
 * - transfers: usdc-payments transfers confirmed on chain (`PAYMENT#…` status confirmed);
 * - splitPayments: instant-split legs confirmed on chain (`SPLITLEG#…` status confirmed);
 * - escrowReleases: booking-settlement escrows released (`BOOKING#…` status completed);
 * - movedMicros: the amounts of those three, in micro-units of USD (stablecoin or payout);
 * - emails: emails the email adapter accepted (`EMAILLOG#…` status sent);
 * - channelMessages: messages sent through a messaging app (`CHANNELMSG#…` direction out);
 * - webhookMessages: messages the webhook skill queued for signed delivery (`HOOKMSG#…`).
 */
export const OUTBOUND_FIELDS = ['transfers', 'splitPayments', 'escrowReleases', 'movedMicros', 'emails', 'channelMessages', 'webhookMessages'] as const;
export type OutboundField = (typeof OUTBOUND_FIELDS)[number];

/** The transaction item that adds `fields` to the account's month of `at`. */
export const outboundCountUpdate = (userId: string, at: Date | string, fields: Partial<Record<OutboundField, number>>): TransactItem =>
  addUpdate(keys.outboundMonth(userId, (typeof at === 'string' ? at : at.toISOString()).slice(0, 7)), fields as Record<string, number>);

export interface OutboundMonth extends Record<OutboundField, number> {
  month: string;
}

export async function readOutboundMonths(userId: string): Promise<OutboundMonth[]> {
  const items = await tenant(userId).queryAll<Record<string, unknown>>(keys.outboundMonthPrefix, { consistent: true });
  return items.map((i) => ({ month: monthOf(i.sk), ...(Object.fromEntries(OUTBOUND_FIELDS.map((f) => [f, num(i[f])])) as Record<OutboundField, number>) }));
}

// --- the records the summary counts --------------------------------------------------------------

/**
 * What `GET /api/metrics/:userId/summary` counts, in the account's partition. The features that
 * own these records write them (skills, booking-settlement, groupie-manager, streaming and
 * royalty skills); this module only reads them:
 *   SKILL#<agentId>#<skillId>  {skillId, agentId, installedAt, enabled?}        an installed skill (enabled unless false)
 *   BOOKING#<bookingId>        {status: 'pending' | 'completed' | ..., createdAt}
 *   TICKETORDER#<orderId>      {status: 'confirmed'}                            a ticket sale: a completed booking
 *   FAN#<fanId>                {segment: 'superfan' | 'casual' | 'new', createdAt, lastActiveAt?}
 *   STREAMS#<yyyy-mm>          {listeners, streams}                             that month's figures
 *   REVENUE#<yyyy-mm>          {amountCents}                                    earned that month, USD
 * Revenue is read from the month records only: royalty imports and USD ticket sales add to them
 * in the transactions that store the statement or the order, so no sale is counted twice.
 */
export interface SummaryRecords {
  skills: { installedAt?: string; enabled?: boolean }[];
  bookings: { status?: string }[];
  fans: { segment?: string; createdAt?: string; lastActiveAt?: string }[];
  streams: { month: string; listeners: number; streams: number }[];
  revenue: { month: string; amountCents: number }[];
}

async function projected(userId: string, prefix: string, attributes: string[]): Promise<Record<string, unknown>[]> {
  const names = Object.fromEntries(['sk', ...attributes].map((a, i) => [`#a${i}`, a]));
  const all: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':prefix': prefix },
        ProjectionExpression: Object.keys(names).join(', '),
        ExpressionAttributeNames: names,
        ExclusiveStartKey: start,
      }),
    );
    all.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return all;
}

const monthOf = (sk: unknown) => String(sk).split('#')[1] ?? '';
const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

export async function readSummaryRecords(userId: string): Promise<SummaryRecords> {
  const [skills, bookings, ticketOrders, fans, streams, revenue] = await Promise.all([
    projected(userId, keys.installedSkillPrefix, ['installedAt', 'enabled']),
    projected(userId, keys.bookingPrefix, ['status']),
    projected(userId, keys.ticketOrderPrefix, ['status']),
    projected(userId, keys.fanPrefix, ['segment', 'createdAt', 'lastActiveAt']),
    projected(userId, keys.streamsMonthPrefix, ['listeners', 'streams']),
    projected(userId, keys.revenueMonthPrefix, ['amountCents']),
  ]);
  return {
    skills: skills.map((s) => ({ installedAt: text(s.installedAt), enabled: s.enabled === false ? false : undefined })),
    bookings: [
      ...bookings.map((b) => ({ status: text(b.status) })),
      ...ticketOrders.map((o) => ({ status: o.status === 'confirmed' ? 'completed' : text(o.status) })),
    ],
    fans: fans.map((f) => ({ segment: text(f.segment), createdAt: text(f.createdAt), lastActiveAt: text(f.lastActiveAt) })),
    streams: streams.map((s) => ({ month: monthOf(s.sk), listeners: num(s.listeners), streams: num(s.streams) })),
    revenue: revenue.map((r) => ({ month: monthOf(r.sk), amountCents: num(r.amountCents) })),
  };
}
