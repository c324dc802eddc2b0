import * as keys from './keys';
import type { Key } from './keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Model usage and the plan's included model spend.
 *
 * Usage: one item per account, UTC day, agent and model at `USER#<id> / USAGE#<day>#<agentId|->#<modelId>`
 * (a caller with no account: `PAYER#<payer> / USAGE#<day>#<modelId>`), every call added to it in one
 * atomic write: prompt and completion tokens, cost in USD, credits charged, calls.
 *
 * Allowance: what a billing period used of the plan's included credits, at
 * `USER#<id> / AIALLOWANCE#<periodStart>` (`used`, `included`).
 */

/** What one call adds to its usage item. */
export interface CallUsage {
  modelId: string;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  credits: number;
  /** The model asked for, when this one answered as its fallback: counted in `fallbackCalls`. */
  fallbackFrom?: string;
}

/** A usage item as stored, with the UTC day (`yyyy-mm-dd`) its key names. */
export interface UsageRecord {
  day: string;
  model: string;
  agentId?: string;
  promptTokens?: number;
  completionTokens?: number;
  costUsd?: number;
  credits?: number;
  calls?: number;
  /** Calls this model answered as a fallback, and the last model it stood in for. */
  fallbackCalls?: number;
  fallbackFrom?: string;
}

export interface AllowanceRecord {
  used?: number;
  included?: number;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10);

/** Adds one call to a usage item; `extra` attributes are set as given (the agent, BYOK, the last payment reference). */
function usageAdd(key: Key, usage: CallUsage, extraGiven: Record<string, unknown>, now: Date): TransactItem {
  const extra = usage.fallbackFrom ? { ...extraGiven, fallbackFrom: usage.fallbackFrom } : extraGiven;
  return tx.update(key, {
    expression:
      `ADD promptTokens :p, completionTokens :c, costUsd :cost, credits :cr, calls :one${usage.fallbackFrom ? ', fallbackCalls :one' : ''} SET model = :m, #day = :day, updatedAt = :now` +
      Object.keys(extra)
        .map((k) => `, ${k} = :x_${k}`)
        .join(''),
    names: { '#day': 'day' },
    values: {
      ':p': usage.promptTokens,
      ':c': usage.completionTokens,
      ':cost': usage.costUsd,
      ':cr': usage.credits,
      ':one': 1,
      ':m': usage.modelId,
      ':day': utcDay(now),
      ':now': now.toISOString(),
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [`:x_${k}`, v])),
    },
  });
}

/** The account's usage item of the day, agent and model, moved by one call: for the transaction that settles the call. */
export function accountUsageItem(
  userId: string,
  agentId: string | undefined,
  usage: CallUsage,
  extra: Record<string, unknown>,
  now = new Date(),
): TransactItem {
  return usageAdd(keys.modelUsage(userId, utcDay(now), agentId, usage.modelId), usage, extra, now);
}

/** Records one call of a pre-paid caller with no account under its payer id. */
export async function recordPayerUsage(payerId: string, usage: CallUsage, extra: Record<string, unknown>, now = new Date()): Promise<void> {
  await transactRetrying([usageAdd(keys.payerUsage(payerId, utcDay(now), usage.modelId), usage, extra, now)]);
}

/** The account's usage items of the days `firstDay` to `lastDay` (both `yyyy-mm-dd`, inclusive), oldest first. */
export async function usageBetween(userId: string, firstDay: string, lastDay: string): Promise<UsageRecord[]> {
  const items = await tenant(userId).queryBetween<Omit<UsageRecord, 'day'> & Record<string, unknown>>(
    `${keys.modelUsagePrefix}${firstDay}`,
    `${keys.modelUsagePrefix}${lastDay}~`,
  );
  return items.map(({ pk: _pk, sk, ...item }) => ({ ...item, day: sk.slice(keys.modelUsagePrefix.length, keys.modelUsagePrefix.length + 10) }));
}

/**
 * Takes `credits` from the period's allowance of `included` credits, on the condition that they
 * still fit (the allowance is created by the first call of the period); false when they do not.
 */
export async function takeAllowance(userId: string, periodStart: string, credits: number, included: number): Promise<boolean> {
  try {
    await tenant(userId).update(
      keys.modelAllowance(userId, periodStart),
      { expression: 'SET used = if_not_exists(used, :zero) + :r, included = :inc', values: { ':zero': 0, ':r': credits, ':inc': included } },
      { expression: 'attribute_not_exists(used) OR used <= :max', values: { ':max': included - credits } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** The allowance moved by `delta` credits, for the transaction that settles a call admitted under it. */
export const allowanceChangeItem = (userId: string, periodStart: string, delta: number): TransactItem =>
  tx.update(keys.modelAllowance(userId, periodStart), { expression: 'SET used = used + :d', values: { ':d': delta } });

/** Gives `credits` taken from the allowance back (a call that never happened). */
export async function returnAllowance(userId: string, periodStart: string, credits: number): Promise<void> {
  await tenant(userId).update(keys.modelAllowance(userId, periodStart), { expression: 'SET used = used - :r', values: { ':r': credits } });
}

/** The period's allowance as stored (consistent read); undefined before its first call. */
export async function getAllowance(userId: string, periodStart: string): Promise<AllowanceRecord | undefined> {
  const item = await tenant(userId).get<AllowanceRecord & Record<string, unknown>>(keys.modelAllowance(userId, periodStart), true);
  return item && { used: item.used, included: item.included };
}
