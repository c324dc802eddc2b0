import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '#platform/errors';
import * as keys from '../keys';
import { ConditionFailedError, tenant } from '../tenant';

/**
 * One send at a time per wallet. A transfer's nonce is the chain's pending count, which only moves
 * once the transfer is broadcast; two sends that read it together would sign the same nonce and
 * one would be refused. So a send holds a lease on the wallet (a conditional put in the account's
 * partition) from reading its nonce until its broadcast, and the others wait their turn. A holder
 * that dies loses the lease when it expires, and the next send reads the chain afresh: no gap.
 */
export const WALLET_LEASE_MS = 30_000;
/** How long a send waits for the wallet before it gives up with 409 WALLET_BUSY. */
export const WALLET_WAIT_MS = 20_000;

export async function withWalletSend<T>(userId: string, send: () => Promise<T>, opts: { leaseMs?: number; waitMs?: number } = {}): Promise<T> {
  const owner = randomBytes(12).toString('hex');
  const leaseMs = opts.leaseMs ?? WALLET_LEASE_MS;
  const giveUpAt = Date.now() + (opts.waitMs ?? WALLET_WAIT_MS);
  const key = keys.walletSendLock(userId);
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    try {
      await tenant(userId).put(
        { ...key, owner, leaseUntil: now + leaseMs, expiresAt: Math.ceil((now + leaseMs) / 1000) + 3600 },
        { expression: 'attribute_not_exists(pk) OR leaseUntil < :now', values: { ':now': now } },
      );
      break;
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      if (Date.now() >= giveUpAt) throw new DomainError('conflict', 'another transfer from this wallet is still being sent, try again', 'WALLET_BUSY');
      // Jittered, growing waits: a send holds the wallet for a few round trips.
      await sleep(Math.min(400, 20 * 2 ** Math.min(attempt, 4)) * (0.5 + Math.random()));
    }
  }
  try {
    return await send();
  } finally {
    await tenant(userId)
      .delete(key, { expression: '#owner = :owner', names: { '#owner': 'owner' }, values: { ':owner': owner } })
      .catch((err) => {
        if (!(err instanceof ConditionFailedError)) throw err;
      });
  }
}
