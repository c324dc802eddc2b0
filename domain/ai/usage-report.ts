import { a2aCountsBetween } from '#data/a2a';
import { getAllowance, usageBetween, type UsageRecord } from '#data/usage';
import { catalogue } from '#domain/models/catalogue';

/**
 * An account's model usage over a period, from the per-day usage items the metering writes and
 * the A2A day counters: tokens, cost and A2A messages per model and per agent, and how many of the
 * calls a model answered as another's fallback.
 */

interface Totals {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  credits: number;
  calls: number;
  /** Calls this model answered as another's fallback. */
  fallbackCalls: number;
}

const zero = (): Totals => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0, credits: 0, calls: 0, fallbackCalls: 0 });

function add(t: Totals, i: UsageRecord) {
  t.promptTokens += i.promptTokens ?? 0;
  t.completionTokens += i.completionTokens ?? 0;
  t.totalTokens += (i.promptTokens ?? 0) + (i.completionTokens ?? 0);
  t.costUsd += i.costUsd ?? 0;
  t.credits += i.credits ?? 0;
  t.calls += i.calls ?? 0;
  t.fallbackCalls += i.fallbackCalls ?? 0;
}

const roundUsd = (t: Totals) => ({ ...t, costUsd: Math.round(t.costUsd * 1e6) / 1e6 });

/** Days are `yyyy-mm-dd`; the period end is exclusive. */
export async function modelUsageReport(userId: string, period: { start: string; end: string }, plan: string | null) {
  const first = period.start.slice(0, 10);
  const endExclusive = new Date(new Date(period.end).getTime() - 1).toISOString().slice(0, 10);
  const [usage, a2a, allowance] = await Promise.all([
    usageBetween(userId, first, endExclusive),
    a2aCountsBetween(userId, first, endExclusive),
    getAllowance(userId, period.start),
  ]);
  const total = zero();
  const byModel = new Map<string, Totals>();
  const byAgent = new Map<string, Totals & { a2aMessages: number }>();
  // Per day and model, for charts over the period (the web console's usage chart).
  const byDayAndModel = new Map<string, Totals & { day: string; model: string }>();
  const agentTotals = (agentId: string) => {
    if (!byAgent.has(agentId)) byAgent.set(agentId, { ...zero(), a2aMessages: 0 });
    return byAgent.get(agentId)!;
  };
  for (const item of usage) {
    add(total, item);
    if (!byModel.has(item.model)) byModel.set(item.model, zero());
    add(byModel.get(item.model)!, item);
    add(agentTotals(item.agentId ?? '-'), item);
    const dayKey = `${item.day}#${item.model}`;
    if (!byDayAndModel.has(dayKey)) byDayAndModel.set(dayKey, { ...zero(), day: item.day, model: item.model });
    add(byDayAndModel.get(dayKey)!, item);
  }
  let a2aMessages = 0;
  for (const counter of a2a) {
    if (counter.agentId === undefined) a2aMessages += counter.count;
    else agentTotals(counter.agentId).a2aMessages += counter.count;
  }
  const included = plan && plan in catalogue().includedCredits ? catalogue().includedCredits[plan as keyof ReturnType<typeof catalogue>['includedCredits']] : 0;
  return {
    tokens: { prompt: total.promptTokens, completion: total.completionTokens, total: total.totalTokens },
    costUsd: roundUsd(total).costUsd,
    allowance: { includedCredits: allowance?.included ?? included, usedCredits: Math.min(allowance?.used ?? 0, allowance?.included ?? included) },
    a2aMessages,
    models: [...byModel].map(([model, t]) => ({ model, ...roundUsd(t) })),
    agents: [...byAgent].map(([agentId, t]) => ({ agentId: agentId === '-' ? null : agentId, ...roundUsd(t) })),
    days: [...byDayAndModel.values()].sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model)).map(roundUsd),
  };
}
