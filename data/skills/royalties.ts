import * as keys from '../keys';
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConditionFailedError, tenant, tx, type TransactItem } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Royalty statements at `USER#<id> / ROYALTY#<statementId>`, amounts as exact decimal strings.
 * Each import also moves the months' revenue records (`REVENUE#<yyyy-mm>`, read by the metrics
 * summary) in the same transaction: `royaltyMicros` holds the exact royalty sum of the month as a
 * string, and `amountCents` (which other revenue writers add to as well) moves by the change of
 * its rounded value, so the month's cents are always the rounded exact sum. The write is
 * conditioned on the `royaltyMicros` it was computed from; a concurrent import makes it retry.
 */
export interface RoyaltyStatement extends Record<string, unknown> {
  statementId: string;
  reference?: string;
  period: string;
  source: string;
  release?: string;
  amount: string;
  currency: 'USD';
  importedAt: string;
}

export class DuplicateStatementError extends DomainError {
  constructor(
    readonly statementIds: string[],
    references: (string | undefined)[],
  ) {
    super('conflict', 'statement already imported', 'DUPLICATE_STATEMENT', { references });
  }
}

type MonthChange = { month: string; micros: bigint };

const MAX_ATTEMPTS = 10;

export async function importStatements(
  userId: string,
  statements: RoyaltyStatement[],
  monthly: MonthChange[],
  centsOf: (micros: bigint) => bigint,
): Promise<void> {
  const store = tenant(userId);
  for (let attempt = 1; ; attempt++) {
    const months = await Promise.all(
      monthly.map(async (m) => {
        const key = keys.revenueMonth(userId, m.month);
        const current = await store.get<{ royaltyMicros?: string }>(key, true);
        const before = current?.royaltyMicros === undefined ? undefined : BigInt(current.royaltyMicros);
        const after = (before ?? 0n) + m.micros;
        const delta = centsOf(after) - centsOf(before ?? 0n);
        const condition =
          before === undefined
            ? { expression: 'attribute_not_exists(royaltyMicros)' }
            : { expression: 'royaltyMicros = :before', values: { ':before': before.toString() } };
        return tx.update(
          key,
          { expression: 'SET royaltyMicros = :after ADD amountCents :delta', values: { ':after': after.toString(), ':delta': Number(delta) } },
          condition,
        );
      }),
    );
    const items: TransactItem[] = [
      ...statements.map((s) => tx.put({ ...keys.royaltyStatement(userId, s.statementId), ...s }, { expression: 'attribute_not_exists(pk)' })),
      ...months,
    ];
    try {
      await transactRetrying(items);
      return;
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const duplicates = statements.filter((_, i) => err.reasons[i] === 'ConditionalCheckFailed');
      if (duplicates.length)
        throw new DuplicateStatementError(
          duplicates.map((s) => s.statementId),
          duplicates.map((s) => s.reference),
        );
      if (attempt >= MAX_ATTEMPTS) throw err;
      await sleep(randomInt(1, 20 * attempt));
    }
  }
}

export const listStatements = (userId: string) => tenant(userId).queryAll<RoyaltyStatement>(keys.royaltyStatementPrefix, { consistent: true });
