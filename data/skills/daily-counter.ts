import type { Key } from '../keys';
import { ConditionFailedError, tenant } from '../tenant';

/**
 * A per-day total in the user's partition (payments sent, emails sent) that a conditional ADD keeps
 * within a limit, so concurrent requests cannot pass it together.
 */
export class DailyLimitExceededError extends Error {}

export async function reserveWithin(userId: string, key: Key, field: string, amount: number, limit: number): Promise<void> {
  if (amount > limit) throw new DailyLimitExceededError('over the daily limit');
  try {
    await tenant(userId).update(
      key,
      { expression: 'ADD #total :amount', names: { '#total': field }, values: { ':amount': amount } },
      { expression: 'attribute_not_exists(#total) OR #total <= :room', values: { ':room': limit - amount } },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new DailyLimitExceededError('over the daily limit');
    throw err;
  }
}

export async function giveBack(userId: string, key: Key, field: string, amount: number): Promise<void> {
  await tenant(userId).update(key, { expression: 'ADD #total :minus', names: { '#total': field }, values: { ':minus': -amount } });
}

export async function totalOf(userId: string, key: Key, field: string): Promise<number> {
  return Number((await tenant(userId).get<Record<string, unknown>>(key, true))?.[field] ?? 0);
}
