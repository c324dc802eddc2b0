import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConditionFailedError, transact, type TransactItem } from './tenant';

const reasonsOf = (err: unknown) => ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');

/**
 * Two transactions touching one item at the same moment cancel each other (`TransactionConflict`),
 * which the SDK does not retry. That is contention, not a broken rule, so it is retried here.
 */
const isConflict = (err: unknown) => {
  const name = (err as { name?: string })?.name;
  if (name === 'TransactionConflictException') return true;
  return name === 'TransactionCanceledException' && reasonsOf(err).includes('TransactionConflict');
};

/**
 * `transact` for writes that contend on one item (a per-account counter, hot memory keys): retries
 * conflicts with jittered exponential backoff. Conditions that fail still throw ConditionFailedError
 * at once; conflicts that outlast every attempt throw it too (the pipeline answers 409, try again).
 */
export async function transactRetrying(items: TransactItem[], attempts = 10): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await transact(items);
    } catch (err) {
      if (!isConflict(err)) throw err;
      if (attempt >= attempts) throw new ConditionFailedError('transaction kept conflicting', reasonsOf(err));
      await sleep(randomInt(1, Math.min(400, 10 * 2 ** attempt)));
    }
  }
}
