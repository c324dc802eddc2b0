import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant, transact, tx } from './tenant';
import { DomainError } from '#platform/errors';

/**
 * One custodial wallet per account (spec 2.12, 4.9), at `USER#<id> / WALLET`, with the global
 * `WALLET#<address>` look-up written in the same transaction. The private key is stored only as an
 * envelope record (platform/crypto/envelope.ts); nothing here ever sees it in the clear.
 */
export type WalletNetworkName = 'l2-test' | 'l2-main';

export interface WalletRecord {
  walletId: string;
  address: `0x${string}`;
  network: WalletNetworkName;
  /** `platform`: created by POST /api/wallet; `hosted`: through the hosted-wallet adapter or an imported key. */
  custody: 'platform' | 'hosted';
  encryptedKey: EnvelopeRecord;
  createdAt: string;
}

export type WalletSummary = Omit<WalletRecord, 'encryptedKey'>;
type StoredWallet = WalletRecord & { userId: string } & Record<string, unknown>;

/** Envelope purpose of wallet private keys (part of the encryption context with the userId). */
export const WALLET_KEY_PURPOSE = 'wallet-private-key';

export class WalletExistsError extends DomainError {
  constructor() {
    super('invalid', 'wallet exists', 'WALLET_EXISTS');
  }
}
/** The address already belongs to a wallet (an imported key that another account holds). */
export class WalletAddressTakenError extends DomainError {
  constructor() {
    super('conflict', 'this key already belongs to another wallet', 'WALLET_ADDRESS_TAKEN');
  }
}

const notExists = { expression: 'attribute_not_exists(pk)' };
const CONFLICT_RETRIES = 4;

const isTransactionConflict = (err: unknown) =>
  (err as { name?: string })?.name === 'TransactionCanceledException' &&
  ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');

/**
 * Both items or neither. Two creates racing for one account: the database lets one through and the
 * other's `attribute_not_exists` fails (or it meets a transaction conflict, retried until it sees the winner).
 */
export async function createWallet(userId: string, wallet: WalletRecord): Promise<void> {
  const items = [
    tx.put({ ...keys.wallet(userId), userId, ...wallet }, notExists),
    tx.put({ ...keys.walletAddress(wallet.address), userId, createdAt: wallet.createdAt }, notExists),
  ];
  for (let attempt = 0; ; attempt++) {
    try {
      await transact(items);
      return;
    } catch (err) {
      if (err instanceof ConditionFailedError) {
        if (err.reasons[0] === 'ConditionalCheckFailed') throw new WalletExistsError();
        throw new WalletAddressTakenError();
      }
      if (!isTransactionConflict(err) || attempt >= CONFLICT_RETRIES) throw err;
      await sleep(20 * (attempt + 1));
    }
  }
}

/** The wallet without its key material: what every route may show. */
export async function getWalletSummary(userId: string): Promise<WalletSummary | undefined> {
  const item = await tenant(userId).get<StoredWallet>(keys.wallet(userId));
  if (!item) return undefined;
  return { walletId: item.walletId, address: item.address, network: item.network, custody: item.custody, createdAt: item.createdAt };
}

/** The sealed key, for the few callers that sign (they decrypt it with the owner's context). */
export async function getWalletKeyRecord(userId: string): Promise<EnvelopeRecord | undefined> {
  return (await tenant(userId).get<StoredWallet>(keys.wallet(userId), true))?.encryptedKey;
}
