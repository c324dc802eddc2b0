import type { AuthContext } from '#domain/auth/authenticate';
import { type OutboundMonth, readOutboundMonths, readSummaryRecords, type SummaryRecords } from '#data/metrics';
import { requireSelfOrAdmin } from './user-metrics';

/** Fans seen within this many days count as active. */
export const ACTIVE_FAN_DAYS = 30;

const monthKey = (d: Date) => d.toISOString().slice(0, 7);
const previousMonthKey = (now: Date) => monthKey(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)));

/** Change of this month over the previous one: `0%` when both are zero, `N/A` when only the previous is. */
export function growth(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? '0%' : 'N/A';
  const pct = Math.round(((current - previous) / previous) * 1000) / 10;
  return `${pct > 0 ? '+' : ''}${pct}%`;
}

const usd = (cents: number) => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const inMonth = (iso: string | undefined, month: string) => !!iso && iso.slice(0, 7) === month;

const usdFromMicros = (micros: number) => usd(Math.round(micros / 10_000));

function outbound(months: OutboundMonth[], now: Date) {
  const sum = (f: keyof Omit<OutboundMonth, 'month'>, list = months) => list.reduce((n, m) => n + m[f], 0);
  const thisMonth = months.filter((m) => m.month === monthKey(now));
  const messages = (list: OutboundMonth[]) => sum('emails', list) + sum('channelMessages', list) + sum('webhookMessages', list);
  return {
    moneyMoved: {
      month: usdFromMicros(sum('movedMicros', thisMonth)),
      total: usdFromMicros(sum('movedMicros')),
      transfers: sum('transfers'),
      splitPayments: sum('splitPayments'),
      escrowReleases: sum('escrowReleases'),
    },
    messagesSent: {
      month: messages(thisMonth),
      total: messages(months),
      emails: sum('emails'),
      channelMessages: sum('channelMessages'),
      webhookMessages: sum('webhookMessages'),
    },
  };
}

export function summarize(r: SummaryRecords, now: Date, months: OutboundMonth[]) {
  const thisMonth = monthKey(now);
  const lastMonth = previousMonthKey(now);
  const byMonth = <T extends { month: string }>(list: T[], month: string) => list.find((x) => x.month === month);
  const count = <T>(list: T[], test: (x: T) => boolean) => list.reduce((n, x) => (test(x) ? n + 1 : n), 0);

  const revenueNow = byMonth(r.revenue, thisMonth)?.amountCents ?? 0;
  const revenueBefore = byMonth(r.revenue, lastMonth)?.amountCents ?? 0;
  const completed = count(r.bookings, (b) => b.status === 'completed');
  const pending = count(r.bookings, (b) => b.status === 'pending');
  const activeSince = now.getTime() - ACTIVE_FAN_DAYS * 86_400_000;
  const streamsNow = byMonth(r.streams, thisMonth);
  const streamsBefore = byMonth(r.streams, lastMonth);

  return {
    revenue: { month: usd(revenueNow), total: usd(r.revenue.reduce((n, x) => n + x.amountCents, 0)), change: growth(revenueNow, revenueBefore) },
    bookings: { completed, pending, conversion: r.bookings.length ? `${Math.round((completed / r.bookings.length) * 1000) / 10}%` : '0%' },
    fans: {
      total: r.fans.length,
      active: count(r.fans, (f) => !!f.lastActiveAt && Date.parse(f.lastActiveAt) >= activeSince),
      growth: growth(
        count(r.fans, (f) => inMonth(f.createdAt, thisMonth)),
        count(r.fans, (f) => inMonth(f.createdAt, lastMonth)),
      ),
      segmentation: {
        superfans: count(r.fans, (f) => f.segment === 'superfan'),
        casual: count(r.fans, (f) => f.segment === 'casual'),
        new: count(r.fans, (f) => f.segment === 'new'),
      },
    },
    streams: {
      monthlyListeners: streamsNow?.listeners ?? 0,
      monthlyStreams: streamsNow?.streams ?? 0,
      growth: growth(streamsNow?.streams ?? 0, streamsBefore?.streams ?? 0),
    },
    skills: {
      active: count(r.skills, (s) => s.enabled !== false),
      total: r.skills.length,
      growth: growth(
        count(r.skills, (s) => inMonth(s.installedAt, thisMonth)),
        count(r.skills, (s) => inMonth(s.installedAt, lastMonth)),
      ),
    },
    ...outbound(months, now),
  };
}

export async function metricsSummary(auth: AuthContext, userId: string, now = new Date()) {
  requireSelfOrAdmin(auth, userId);
  const [records, months] = await Promise.all([readSummaryRecords(userId), readOutboundMonths(userId)]);
  return summarize(records, now, months);
}
