import * as keys from '../keys';
import { outboundCountUpdate } from '../metrics';
import { ConditionFailedError, tenant, transact, tx } from '../tenant';
import { giveBack, reserveWithin, totalOf } from './daily-counter';

/**
 * usdc-payments records in the user's partition. Amounts are micro-units of the payment token
 * (6 decimals; the contract caps an amount at 9 whole digits, so they stay exact as numbers).
 * - `PAYMENT#<hash>`: one transfer, written with its signed bytes BEFORE it is broadcast (so a
 *   retry resends the very same transaction and can never pay twice), `pending` until its receipt.
 * - `PAYMENTLIMIT`: the daily limit the user set; `PAYMENTDAY#<yyyy-mm-dd>`: what was sent that UTC
 *   day, reserved by a conditional ADD so concurrent sends cannot pass the limit together.
 */
export type TransferStatus = 'pending' | 'confirmed' | 'failed';

export interface StablecoinTransfer extends Record<string, unknown> {
  hash: string;
  from: string;
  to: string;
  amount: string;
  amountMicros: number;
  symbol: string;
  memo?: string;
  status: TransferStatus;
  day: string;
  nonce: number;
  /** The signed transaction, for a resend; public data, never key material. */
  signedTransaction: string;
  createdAt: string;
  settledAt?: string;
  blockNumber?: string;
}

export { DailyLimitExceededError } from './daily-counter';

export async function getDailyLimitMicros(userId: string): Promise<number | undefined> {
  return (await tenant(userId).get<{ dailyLimitMicros: number }>(keys.paymentLimit(userId), true))?.dailyLimitMicros;
}

export async function setDailyLimitMicros(userId: string, micros: number, now: Date): Promise<void> {
  await tenant(userId).put({ ...keys.paymentLimit(userId), dailyLimitMicros: micros, updatedAt: now.toISOString() });
}

export const sentOnDay = (userId: string, day: string) => totalOf(userId, keys.paymentDay(userId, day), 'sentMicros');

/** Adds `micros` to the day's total only if it stays within `limitMicros`. */
export const reserveDaily = (userId: string, day: string, micros: number, limitMicros: number) =>
  reserveWithin(userId, keys.paymentDay(userId, day), 'sentMicros', micros, limitMicros);

export const releaseDaily = (userId: string, day: string, micros: number) => giveBack(userId, keys.paymentDay(userId, day), 'sentMicros', micros);

export async function recordTransfer(userId: string, transfer: StablecoinTransfer): Promise<void> {
  await tenant(userId).put({ ...keys.stablecoinTransfer(userId, transfer.hash), ...transfer }, { expression: 'attribute_not_exists(pk)' });
}

export const getTransfer = (userId: string, hash: string) => tenant(userId).get<StablecoinTransfer>(keys.stablecoinTransfer(userId, hash), true);

export const listTransfers = (userId: string) => tenant(userId).queryAll<StablecoinTransfer>(keys.stablecoinTransferPrefix, { consistent: true });

/**
 * pending → confirmed/failed, once: false when another caller settled it first. A confirmed
 * transfer of `amountMicros` counts as money moved that month, in the same transaction.
 */
export async function settleTransfer(
  userId: string,
  hash: string,
  status: 'confirmed' | 'failed',
  at: string,
  blockNumber?: string,
  amountMicros = 0,
): Promise<boolean> {
  try {
    await transact([
      tx.update(
        keys.stablecoinTransfer(userId, hash),
        {
          expression: 'SET #status = :status, settledAt = :at, blockNumber = :block',
          names: { '#status': 'status' },
          values: { ':status': status, ':at': at, ':block': blockNumber ?? null },
        },
        { expression: '#status = :pending', values: { ':pending': 'pending' } },
      ),
      ...(status === 'confirmed' ? [outboundCountUpdate(userId, at, { transfers: 1, movedMicros: amountMicros })] : []),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
