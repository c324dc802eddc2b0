import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { reloadConfig } from '#platform/config';
import { storeWallet } from '#domain/wallets/keys';
import { resetLogger } from '#platform/logger';
import { startLocalChain } from './local-chain';

/** The payment token the payments skills send on the local chain (6 decimals, like USDC). */
export const PAYMENT_TOKEN = '0x00000000000000000000000000000000000c0ffe' as Hex;

/**
 * The local chain with the payment token deployed, the settings pointing usdc-payments and
 * instant-split at it, and every line the logger writes captured, so tests can prove no key
 * material ever reaches a log.
 */
export async function startPaymentsChain() {
  const dir = mkdtempSync(path.join(tmpdir(), 'payments-test-'));
  const chain = await startLocalChain({ chainId: 84532 });
  await chain.deployToken(PAYMENT_TOKEN);
  reloadConfig({
    WALLET_RPC_URL: chain.url,
    PAYMENT_TOKEN: `USDC:${PAYMENT_TOKEN}:6`,
    LOCAL_MASTER_KEY_FILE: path.join(dir, 'master.key'),
    KMS_KEY_ID: undefined,
    LOG_LEVEL: 'DEBUG',
  });
  resetLogger();
  const logLines: string[] = [];
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tap = ((chunk: unknown, ...rest: unknown[]) => {
    logLines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = tap;
  process.stderr.write = tap;

  return {
    chain,
    logLines,
    /** A custodial wallet for the user with a known key (so tests can look for it), funded with `units`. */
    async fundedWallet(userId: string, units: bigint): Promise<{ address: Hex; privateKey: Hex }> {
      const privateKey = generatePrivateKey();
      const summary = await storeWallet(userId, { custody: 'platform', network: 'l2-test', privateKey });
      if (units > 0n) await chain.mint(PAYMENT_TOKEN, summary.address, units);
      return { address: privateKeyToAccount(privateKey).address, privateKey };
    },
    balance: (holder: Hex) => chain.balanceOf(PAYMENT_TOKEN, holder),
    async stop(): Promise<void> {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
      reloadConfig({ WALLET_RPC_URL: undefined, PAYMENT_TOKEN: undefined, LOCAL_MASTER_KEY_FILE: undefined, LOG_LEVEL: 'SILENT' });
      resetLogger();
      await chain.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PaymentsChain = Awaited<ReturnType<typeof startPaymentsChain>>;

/** No form of the key in any text: with or without 0x, any case. */
export const leaksKey = (text: string, privateKey: Hex) => text.toLowerCase().includes(privateKey.slice(2).toLowerCase());

/** A fresh recipient address. */
export const newRecipient = () => privateKeyToAccount(generatePrivateKey()).address;
