import { adjustCredits, creditEntryId, InsufficientCreditsError } from '#domain/billing/credits';
import type { SubscriptionRecord } from '#domain/billing/entitlements';
import { ACCOUNT_SCOPE, agentScope, BudgetExceededDbError, type BudgetCap, capsFor, releaseBudget, reserveBudget, settleSpendItems } from '#data/budgets';
import { releaseReservedCredits, settleReservedCreditItems } from '#data/credits';
import { accountUsageItem, allowanceChangeItem, type CallUsage, recordPayerUsage as recordPayerCall, returnAllowance, takeAllowance } from '#data/usage';
import { getUser } from '#data/users';
import { ConditionFailedError } from '#data/failures';
import { transactRetrying } from '#data/writes';
import { catalogue, costUsd, creditsFor, type CataloguePlan, type CatalogueModel } from '#domain/models/catalogue';
import { checkBudgets } from './budget-guard';
import { watchAgentSpend } from './loop-breaker';
import { BudgetExceededError, InsufficientCreditsAiError } from './errors';

/**
 * Metering and the spending rule.
 *
 * Every call is recorded, with one atomic write, in a usage item per account, day (UTC), agent and
 * model (`USAGE#<day>#<agentId|->#<modelId>`): prompt and completion tokens, cost in USD at
 * catalogue price, credits charged, calls. A pre-paid caller with no account (the gateway's on-chain
 * payer) is recorded under `PAYER#<payer>` / `USAGE#<day>#<modelId>` and charged nothing here.
 *
 * Spending rule: each plan includes `includedCredits` of model spend per billing period (the
 * subscription's period, else the calendar month); past it, calls are debited from the credit
 * balance through the ledger at catalogue price (1 credit = `creditUsd`, rounded up per call).
 * BYOK calls and admin calls cost no credits. Before the call an estimate is reserved (from the
 * allowance if it covers it, else from the balance: the estimate, or all that is left when less);
 * nothing reserved → 402 INSUFFICIENT_CREDITS. After the call the reservation is settled to the
 * actual cost in the same transaction as the usage item: the difference is refunded, or the extra
 * taken only as far as the balance goes, so the ledger never goes negative. A call admitted under
 * the allowance is charged to it in full, even when it ends a little past it.
 *
 * Spending caps (data/budgets.ts): before the credits, the call's most possible cost
 * (`budgetUsd`) is added to the month's spend of the account and of the calling agent under the
 * condition that each capped scope is still below its cap (402 BUDGET_EXCEEDED otherwise); the
 * settlement moves each scope's spend to the actual cost in the usage item's transaction. Every
 * account call counts, BYOK and admin calls included: the cap is about what the agents spend.
 */

/** Output tokens reserved for when the caller sets no `max_tokens`. */
const RESERVED_OUTPUT_TOKENS = 256;

export type ChargeSource = 'allowance' | 'credits' | 'none';

export interface Reservation {
  userId: string;
  source: ChargeSource;
  credits: number;
  entryId?: string;
  periodStart?: string;
  /** The spend scopes the call counts for, with what was reserved on each (0 where no cap applies). */
  budget?: { scope: string; reservedUsd: number }[];
  caps?: BudgetCap[];
}

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  /** The model asked for, when a fallback answered. */
  fallbackFrom?: string;
}

export const utcDay = (now = new Date()) => now.toISOString().slice(0, 10);

/** The subscription's billing period, else the calendar month (UTC). */
export function billingPeriod(sub: Pick<SubscriptionRecord, 'currentPeriodStart' | 'currentPeriodEnd'> | undefined, now = new Date()) {
  if (sub?.currentPeriodStart && sub.currentPeriodEnd && sub.currentPeriodEnd > now.toISOString())
    return { start: sub.currentPeriodStart, end: sub.currentPeriodEnd };
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

/** Credits a call is expected to cost: the prompt estimate plus the completion it may produce. */
export function estimateCredits(model: CatalogueModel, promptTokens: number, maxOutputTokens: number | undefined): number {
  return Math.max(1, creditsFor(costUsd(model, promptTokens, maxOutputTokens ?? Math.min(RESERVED_OUTPUT_TOKENS, model.maxOutputTokens))));
}

async function reserveAllowance(userId: string, plan: CataloguePlan, periodStart: string, credits: number): Promise<boolean> {
  const included = catalogue().includedCredits[plan] ?? 0;
  if (included < credits) return false;
  return takeAllowance(userId, periodStart, credits, included);
}

async function reserveCredits(userId: string, credits: number): Promise<Reservation> {
  let want = credits;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const entryId = creditEntryId();
    try {
      await adjustCredits(userId, -want, 'usage', entryId, 'model call (reserved)');
      return { userId, source: 'credits', credits: want, entryId };
    } catch (err) {
      if (!(err instanceof InsufficientCreditsError)) throw err;
      // Less left than the estimate: reserve what is left; settlement takes no more than that.
      const balance = (await getUser(userId, true))?.credits ?? 0;
      if (balance <= 0) break;
      want = Math.min(want, balance);
    }
  }
  throw new InsufficientCreditsAiError();
}

/** Admits a call under the caps of the account and the calling agent; refusal also pulls the kill switch. */
async function admitBudget(userId: string, agentId: string | undefined, budgetUsd: number): Promise<Pick<Reservation, 'budget' | 'caps'>> {
  const caps = await capsFor(userId, agentId);
  try {
    await reserveBudget(userId, caps, budgetUsd);
  } catch (err) {
    if (!(err instanceof BudgetExceededDbError)) throw err;
    await checkBudgets(
      userId,
      caps.filter((c) => c.scope === err.scope),
    );
    throw new BudgetExceededError(err.scope);
  }
  const capped = new Set(caps.map((c) => c.scope));
  const scopes = [ACCOUNT_SCOPE, ...(agentId ? [agentScope(agentId)] : [])];
  return { caps, budget: scopes.map((scope) => ({ scope, reservedUsd: capped.has(scope) ? budgetUsd : 0 })) };
}

/**
 * Reserves a call's estimated credits; `free` callers (BYOK, admins) reserve none. `budgetUsd`: the
 * most the call may cost at catalogue price, held against the spending caps.
 */
export async function reserve(input: {
  userId: string;
  plan: CataloguePlan;
  periodStart: string;
  credits: number;
  free: boolean;
  agentId?: string;
  budgetUsd: number;
}): Promise<Reservation> {
  const budget = await admitBudget(input.userId, input.agentId, input.budgetUsd);
  try {
    if (input.free) return { userId: input.userId, source: 'none', credits: 0, ...budget };
    if (await reserveAllowance(input.userId, input.plan, input.periodStart, input.credits)) {
      return { userId: input.userId, source: 'allowance', credits: input.credits, periodStart: input.periodStart, ...budget };
    }
    return { ...(await reserveCredits(input.userId, input.credits)), ...budget };
  } catch (err) {
    await releaseBudget(input.userId, budget.budget ?? []);
    throw err;
  }
}

/** What a call adds to its usage item: its tokens, their cost at catalogue price and the credits charged. */
function callUsage(model: CatalogueModel, usage: UsageCounts, charged: number): CallUsage {
  const cost = costUsd(model, usage.promptTokens, usage.completionTokens);
  return {
    modelId: model.id,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    costUsd: cost,
    credits: charged,
    ...(usage.fallbackFrom ? { fallbackFrom: usage.fallbackFrom } : {}),
  };
}

async function settleCharge(
  r: Reservation,
  model: CatalogueModel,
  agentId: string | undefined,
  usage: UsageCounts,
  byok: boolean,
  now = new Date(),
): Promise<number> {
  const actual = creditsFor(costUsd(model, usage.promptTokens, usage.completionTokens));
  const extra = { ...(agentId ? { agentId } : {}), ...(byok ? { byok: true } : {}) };
  const spend = settleSpendItems(r.userId, r.budget ?? [], costUsd(model, usage.promptTokens, usage.completionTokens), now);
  if (r.source === 'none') {
    await transactRetrying([accountUsageItem(r.userId, agentId, callUsage(model, usage, 0), extra, now), ...spend]);
    return 0;
  }
  if (r.source === 'allowance') {
    const allowance = allowanceChangeItem(r.userId, r.periodStart!, actual - r.credits);
    await transactRetrying([
      accountUsageItem(r.userId, agentId, callUsage(model, usage, 0), extra, now),
      ...spend,
      ...(actual !== r.credits ? [allowance] : []),
    ]);
    return 0;
  }
  let charged = actual;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const refund = r.credits - charged;
    const items = [
      accountUsageItem(r.userId, agentId, callUsage(model, usage, charged), extra, now),
      ...spend,
      ...settleReservedCreditItems(r.userId, r.entryId!, refund, charged, `${model.id}`),
    ];
    try {
      await transactRetrying(items);
      return charged;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || refund >= 0) throw err;
      // The call cost more than reserved and the balance no longer covers the rest: take what is left.
      const balance = (await getUser(r.userId, true))?.credits ?? 0;
      charged = r.credits + Math.max(0, Math.min(balance, actual - r.credits));
    }
  }
  throw new Error('settling a model call kept conflicting');
}

/**
 * Settles a reservation to the actual usage and records it (spend of the capped scopes included), in
 * one transaction, then runs the caps' alerts. Returns the credits charged (0 for allowance and free calls).
 */
export async function settle(...args: Parameters<typeof settleCharge>): Promise<number> {
  const [r] = args;
  const [, model, agentId, usage] = args;
  const charged = await settleCharge(...args);
  if (r.caps?.length) await checkBudgets(r.userId, r.caps);
  if (agentId && r.caps?.length) await watchAgentSpend(r.userId, agentId, costUsd(model, usage.promptTokens, usage.completionTokens), r.caps);
  return charged;
}

/** Gives a reservation back when the call never happened (provider failure before any output). */
export async function release(r: Reservation): Promise<void> {
  await releaseBudget(r.userId, r.budget ?? []);
  if (r.source === 'allowance') {
    await returnAllowance(r.userId, r.periodStart!, r.credits);
  } else if (r.source === 'credits') {
    await releaseReservedCredits(r.userId, r.entryId!, r.credits);
  }
}

/** Usage of a pre-paid caller with no account: recorded under its payer id, nothing charged here. */
export async function recordPayerUsage(payerId: string, model: CatalogueModel, usage: UsageCounts, reference: string | undefined, now = new Date()) {
  await recordPayerCall(payerId, callUsage(model, usage, 0), reference ? { lastReference: reference } : {}, now);
}
