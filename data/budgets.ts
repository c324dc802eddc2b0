import * as keys from './keys';
import type { Key } from './keys';
import { type Condition, ConditionFailedError, tenant, tx, type TransactItem } from './tenant';
import { transactRetrying } from './transact-retry';

/**
 * Monthly spending caps, per account and per agent, over everything metered.
 *
 * A cap lives at `BUDGET#ACCOUNT` or `BUDGET#AGENT#<agentId>`; what a scope spent in a UTC month at
 * `BUDGETSPEND#<YYYY-MM>#<scope>` (`spentUsd`, catalogue cost, reservations in flight included).
 *
 * THE BOUND: a metered call is admitted only by a conditional write that adds its reservation (the
 * most the call may cost) to `spentUsd` on the condition that `spentUsd` is still below the cap;
 * settlement replaces the reservation by the actual cost in the same transaction as the usage item.
 * So `spentUsd` is below the cap before every admission and never grows past cap + the admitted
 * call's reservation: however many calls run at once, the month's spend overshoots the cap by less
 * than one call's reservation.
 */

export const ACCOUNT_SCOPE = 'ACCOUNT';
export const agentScope = (agentId: string) => `AGENT#${agentId}`;

/** Spend records are kept a little over a year, for the history of past months. */
const SPEND_TTL_SECONDS = 400 * 24 * 3600;

export const utcMonth = (now = new Date()) => now.toISOString().slice(0, 7);

export interface BudgetCap {
  scope: string;
  monthlyCapUsd: number;
  updatedAt: string;
}

export interface BudgetSpend {
  spentUsd: number;
  /** The cap each alert was sent for: an alert goes once per month per cap. */
  warnedAtCap?: number;
  exceededAtCap?: number;
}

export class BudgetExceededDbError extends Error {
  constructor(readonly scope: string) {
    super(`the monthly spending cap of ${scope} is reached`);
  }
}

export async function getBudgetCap(userId: string, scope: string): Promise<BudgetCap | undefined> {
  const item = await tenant(userId).get<BudgetCap & Record<string, unknown>>(keys.budgetCap(userId, scope), true);
  return item && { scope, monthlyCapUsd: item.monthlyCapUsd, updatedAt: item.updatedAt };
}

/** The caps that apply to a call: the account's and, when an agent calls, the agent's (one query). */
export async function capsFor(userId: string, agentId: string | undefined): Promise<BudgetCap[]> {
  const scopes = new Set([ACCOUNT_SCOPE, ...(agentId ? [agentScope(agentId)] : [])]);
  const items = await tenant(userId).queryAll<BudgetCap & Record<string, unknown>>(keys.budgetCapPrefix);
  return items
    .map((item) => ({ scope: item.sk.slice(keys.budgetCapPrefix.length), monthlyCapUsd: item.monthlyCapUsd, updatedAt: item.updatedAt }))
    .filter((cap) => scopes.has(cap.scope));
}

export async function putBudgetCap(userId: string, scope: string, monthlyCapUsd: number, now = new Date()): Promise<BudgetCap> {
  const cap = { scope, monthlyCapUsd, updatedAt: now.toISOString() };
  await tenant(userId).put({ ...keys.budgetCap(userId, scope), ...cap });
  return cap;
}

export async function deleteBudgetCap(userId: string, scope: string): Promise<boolean> {
  return (await tenant(userId).delete(keys.budgetCap(userId, scope))) !== undefined;
}

export async function getSpend(userId: string, scope: string, now = new Date()): Promise<BudgetSpend> {
  const item = await tenant(userId).get<BudgetSpend & Record<string, unknown>>(keys.budgetSpend(userId, utcMonth(now), scope), true);
  return { spentUsd: Number(item?.spentUsd ?? 0), warnedAtCap: item?.warnedAtCap, exceededAtCap: item?.exceededAtCap };
}

/** The month's spend of a scope moved by `deltaUsd`, optionally only while it is below `underCap`. */
function spendChange(userId: string, scope: string, deltaUsd: number, now: Date, underCap?: number): [Key, Condition, Condition | undefined] {
  return [
    keys.budgetSpend(userId, utcMonth(now), scope),
    {
      expression: 'ADD spentUsd :d SET #month = :m, expiresAt = if_not_exists(expiresAt, :ttl)',
      names: { '#month': 'month' },
      values: { ':d': deltaUsd, ':m': utcMonth(now), ':ttl': Math.floor(now.getTime() / 1000) + SPEND_TTL_SECONDS },
    },
    underCap === undefined ? undefined : { expression: 'attribute_not_exists(spentUsd) OR spentUsd < :cap', values: { ':cap': underCap } },
  ];
}

const spendAdd = (...args: Parameters<typeof spendChange>): TransactItem => tx.update(...spendChange(...args));

/**
 * Admits a call against every cap that applies, adding its reservation to each capped scope in one
 * transaction under the condition that the scope is still below its cap. Throws
 * BudgetExceededDbError naming the first scope that is not.
 */
export async function reserveBudget(userId: string, caps: BudgetCap[], reservedUsd: number, now = new Date()): Promise<void> {
  if (!caps.length) return;
  const changes = caps.map((cap) => spendChange(userId, cap.scope, reservedUsd, now, cap.monthlyCapUsd));
  try {
    // One cap (the usual case) is a single conditional update: concurrent calls queue on the item instead of cancelling each other's transactions.
    if (changes.length === 1) await tenant(userId).update(...changes[0]!);
    else await transactRetrying(changes.map((change) => tx.update(...change)));
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const failed = changes.length === 1 ? 0 : err.reasons.findIndex((r) => r === 'ConditionalCheckFailed');
    if (failed < 0) throw err;
    throw new BudgetExceededDbError(caps[failed]!.scope);
  }
}

/**
 * The spend items of a settlement, to write in the usage item's transaction: each scope the call
 * counts for moves by the actual cost less what was reserved on it.
 */
export function settleSpendItems(userId: string, scopes: { scope: string; reservedUsd: number }[], actualUsd: number, now = new Date()): TransactItem[] {
  return scopes.map(({ scope, reservedUsd }) => spendAdd(userId, scope, actualUsd - reservedUsd, now));
}

/** Gives back reservations of a call that never happened. */
export async function releaseBudget(userId: string, scopes: { scope: string; reservedUsd: number }[], now = new Date()): Promise<void> {
  const reserved = scopes.filter((s) => s.reservedUsd > 0);
  if (reserved.length) await transactRetrying(reserved.map((s) => spendAdd(userId, s.scope, -s.reservedUsd, now)));
}

/**
 * Takes the month's `warned` or `exceeded` alert of a scope for its current cap when the spend has
 * reached `thresholdUsd`: true for exactly one caller per month and cap.
 */
export async function claimBudgetAlert(
  userId: string,
  scope: string,
  kind: 'warnedAtCap' | 'exceededAtCap',
  capUsd: number,
  thresholdUsd: number,
  now = new Date(),
) {
  try {
    await tenant(userId).update(
      keys.budgetSpend(userId, utcMonth(now), scope),
      { expression: 'SET #kind = :cap', names: { '#kind': kind }, values: { ':cap': capUsd } },
      { expression: 'spentUsd >= :threshold AND (attribute_not_exists(#kind) OR #kind <> :cap)', values: { ':threshold': thresholdUsd } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** Whether a cap of the account or of the agent is reached this month (scheduled runs are then skipped). */
export async function budgetReached(userId: string, agentId: string, now = new Date()): Promise<boolean> {
  const caps = await capsFor(userId, agentId);
  const spends = await Promise.all(caps.map((cap) => getSpend(userId, cap.scope, now)));
  return caps.some((cap, i) => spends[i]!.spentUsd >= cap.monthlyCapUsd);
}
