import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { createWallet, WALLET_KEY_PURPOSE, type WalletNetworkName, type WalletRecord, type WalletSummary } from '#data/wallets';
import { decrypt, encrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import { DomainError } from '#platform/errors';

/** The key is not a valid secp256k1 private key. The message never carries the key (viem's does). */
export class InvalidPrivateKeyError extends DomainError {
  constructor() {
    super('invalid', 'privateKey is not a valid secp256k1 private key', 'INVALID_PRIVATE_KEY');
  }
}

const walletContext = (userId: string) => ({ userId, purpose: WALLET_KEY_PURPOSE });

async function addressOf(privateKey: Hex): Promise<`0x${string}`> {
  const { privateKeyToAccount } = await import('#platform/lazy/viem-keys');
  try {
    return privateKeyToAccount(privateKey).address;
  } catch {
    throw new InvalidPrivateKeyError();
  }
}

/**
 * Seals a private key (generated here unless one is imported) for its owner and stores the wallet.
 * Throws WalletExistsError / WalletAddressTakenError from the store; answers only public fields.
 */
export async function storeWallet(
  userId: string,
  opts: { custody: WalletRecord['custody']; network: WalletNetworkName; privateKey?: Hex },
  now = new Date(),
): Promise<WalletSummary> {
  const { generatePrivateKey, hexToBytes } = await import('#platform/lazy/viem-keys');
  const privateKey = opts.privateKey ?? generatePrivateKey();
  const address = await addressOf(privateKey);
  const raw = hexToBytes(privateKey);
  let encryptedKey: EnvelopeRecord;
  try {
    encryptedKey = await encrypt(raw, walletContext(userId));
  } finally {
    raw.fill(0);
  }
  const summary = { walletId: `wal_${randomUUID().replaceAll('-', '')}`, address, network: opts.network, custody: opts.custody, createdAt: now.toISOString() };
  await createWallet(userId, { ...summary, encryptedKey });
  return summary;
}

/** The owner's private key, for signing only; callers must never return or log it. */
export async function openWalletKey(userId: string, record: EnvelopeRecord): Promise<Hex> {
  const { bytesToHex } = await import('#platform/lazy/viem-keys');
  const raw = await decrypt(record, walletContext(userId));
  try {
    return bytesToHex(raw);
  } finally {
    raw.fill(0);
  }
}
