import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Agent-to-agent messages per account and UTC day (spec 2.16). The day counter is raised under the
 * condition that it is below the plan's limit, in the same transaction as the sending agent's share,
 * so concurrent sends can never pass the limit.
 */

export class A2aLimitError extends DomainError {
  constructor(
    readonly current: number,
    readonly limit: number,
  ) {
    super('limitReached', `the plan allows ${limit} agent-to-agent messages a day`, 'A2A_LIMIT_REACHED', { current, limit });
  }
}

export async function countA2aMessage(userId: string, fromAgentId: string, limit: number, now = new Date()): Promise<number> {
  const day = now.toISOString().slice(0, 10);
  const expiresAt = Math.floor(now.getTime() / 1000) + 400 * 86400;
  try {
    await transactRetrying([
      tx.update(
        keys.a2aDay(userId, day),
        { expression: 'ADD #count :one SET expiresAt = :exp', names: { '#count': 'count' }, values: { ':one': 1, ':exp': expiresAt } },
        { expression: 'attribute_not_exists(#count) OR #count < :limit', names: { '#count': 'count' }, values: { ':limit': limit } },
      ),
      tx.update(keys.a2aAgentDay(userId, day, fromAgentId), {
        expression: 'ADD #count :one SET expiresAt = :exp',
        names: { '#count': 'count' },
        values: { ':one': 1, ':exp': expiresAt },
      }),
    ]);
  } catch (err) {
    if (!(err instanceof ConditionFailedError) || err.reasons[0] !== 'ConditionalCheckFailed') throw err;
    const current = (await tenant(userId).get<{ count?: number }>(keys.a2aDay(userId, day), true))?.count ?? limit;
    throw new A2aLimitError(current, limit);
  }
  return (await tenant(userId).get<{ count?: number }>(keys.a2aDay(userId, day), true))?.count ?? 1;
}

/** A day counter as stored: the account's total of the day, or one agent's share of it (`agentId`). */
export interface A2aDayCount {
  day: string;
  agentId?: string;
  count: number;
}

/** The day counters (totals and agents' shares) of `firstDay` to `lastDay` (both `yyyy-mm-dd`, inclusive), oldest first. */
export async function a2aCountsBetween(userId: string, firstDay: string, lastDay: string): Promise<A2aDayCount[]> {
  const items = await tenant(userId).queryBetween<{ count?: number }>(`${keys.a2aPrefix}${firstDay}`, `${keys.a2aPrefix}${lastDay}~`);
  return items.map((item) => {
    const parts = item.sk.split('#');
    return { day: parts[1]!, ...(parts.length === 2 ? {} : { agentId: parts[2]! }), count: item.count ?? 0 };
  });
}
