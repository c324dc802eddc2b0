import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { catalogue } from '#domain/models/catalogue';

/**
 * An account's model usage over a period, from the per-day usage items the metering writes and
 * the A2A day counters: tokens, cost and A2A messages per model and per agent.
 */

interface UsageItem extends Record<string, unknown> {
  sk: string;
  model: string;
  agentId?: string;
  promptTokens?: number;
  completionTokens?: number;
  costUsd?: number;
  credits?: number;
  calls?: number;
}

interface Totals {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  credits: number;
  calls: number;
}

const zero = (): Totals => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 0, credits: 0, calls: 0 });

function add(t: Totals, i: UsageItem) {
  t.promptTokens += i.promptTokens ?? 0;
  t.completionTokens += i.completionTokens ?? 0;
  t.totalTokens += (i.promptTokens ?? 0) + (i.completionTokens ?? 0);
  t.costUsd += i.costUsd ?? 0;
  t.credits += i.credits ?? 0;
  t.calls += i.calls ?? 0;
}

const roundUsd = (t: Totals) => ({ ...t, costUsd: Math.round(t.costUsd * 1e6) / 1e6 });

/** Days are `yyyy-mm-dd`; the period end is exclusive. */
export async function modelUsageReport(userId: string, period: { start: string; end: string }, plan: string | null) {
  const first = period.start.slice(0, 10);
  const endExclusive = new Date(new Date(period.end).getTime() - 1).toISOString().slice(0, 10);
  const store = tenant(userId);
  const [usage, a2a, allowance] = await Promise.all([
    store.queryBetween<UsageItem>(`${keys.modelUsagePrefix}${first}`, `${keys.modelUsagePrefix}${endExclusive}~`),
    store.queryBetween<{ sk: string; count?: number }>(`${keys.a2aPrefix}${first}`, `${keys.a2aPrefix}${endExclusive}~`),
    store.get<{ used?: number; included?: number }>(keys.modelAllowance(userId, period.start), true),
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
    const day = item.sk.slice(keys.modelUsagePrefix.length, keys.modelUsagePrefix.length + 10);
    const dayKey = `${day}#${item.model}`;
    if (!byDayAndModel.has(dayKey)) byDayAndModel.set(dayKey, { ...zero(), day, model: item.model });
    add(byDayAndModel.get(dayKey)!, item);
  }
  let a2aMessages = 0;
  for (const item of a2a) {
    const parts = item.sk.split('#');
    if (parts.length === 2) a2aMessages += item.count ?? 0;
    else agentTotals(parts[2]!).a2aMessages += item.count ?? 0;
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
