import * as keys from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * Addresses the treasury skill tracks at `USER#<id> / TREASURY#<address>`, with their count in
 * `TREASURYCOUNT`, moved in the same transaction, so concurrent adds cannot pass the cap.
 */
export interface TrackedWallet extends Record<string, unknown> {
  address: string;
  label?: string;
  addedAt: string;
}

export class TrackedWalletLimitError extends DomainError {
  constructor(limit: number) {
    super('limitReached', `at most ${limit} tracked wallets`, 'TREASURY_WALLET_LIMIT', { limit });
  }
}
export class TrackedWalletExistsError extends DomainError {
  constructor() {
    super('conflict', 'this address is already tracked', 'WALLET_TRACKED');
  }
}

export async function addTrackedWallet(userId: string, wallet: TrackedWallet, limit: number): Promise<void> {
  try {
    await transactRetrying([
      tx.put({ ...keys.treasuryWallet(userId, wallet.address), ...wallet }, { expression: 'attribute_not_exists(pk)' }),
      tx.update(
        keys.treasuryWalletCount(userId),
        { expression: 'ADD wallets :one', values: { ':one': 1 } },
        { expression: 'attribute_not_exists(wallets) OR wallets < :limit', values: { ':limit': limit } },
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') throw new TrackedWalletExistsError();
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed') throw new TrackedWalletLimitError(limit);
    throw err;
  }
}

export async function removeTrackedWallet(userId: string, address: string): Promise<boolean> {
  try {
    await transactRetrying([
      tx.delete(keys.treasuryWallet(userId, address), { expression: 'attribute_exists(pk)' }),
      tx.update(keys.treasuryWalletCount(userId), { expression: 'ADD wallets :minus', values: { ':minus': -1 } }),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export function listTrackedWallets(userId: string): Promise<TrackedWallet[]> {
  return tenant(userId).queryAll<TrackedWallet>(keys.treasuryWalletPrefix, { consistent: true });
}
