import type { Hex } from 'viem';
import { chainClient } from '#adapters/chain';
import { skillTokensConfig, walletConfig } from '#platform/config';
import { openWalletKey } from '#domain/wallets/keys';
import { getWalletKeyRecord, getWalletSummary } from '#data/wallets';
import { DEFAULT_DAILY_PAYMENT_LIMIT } from '#contract/skill-actions/payments';
import { DailyLimitExceededError, getDailyLimitMicros, reserveDaily, sentOnDay } from '#data/skills/payments';
import { invalid, unavailable } from '#platform/errors';
import { fromMicros, toMicros } from './decimal';
import { logger } from '#http/logger';

/**
 * Stablecoin transfers from the account's custodial wallet (usdc-payments, instant-split), through
 * the chain adapter (WALLET_RPC_URL) and the token of PAYMENT_TOKEN. The private key is decrypted
 * only inside `signTransfer`, used by viem to sign, and dropped: it is never logged, stored in the
 * clear or returned. A transfer is signed first and broadcast separately, so its hash and bytes can
 * be recorded before anything leaves, and a retry resends the same bytes (the chain takes a nonce once).
 */
export function paymentSettings() {
  const token = skillTokensConfig().paymentToken;
  const { rpcUrl, rpcTimeoutMs } = walletConfig();
  if (!token || !rpcUrl) throw unavailable('payments are not configured (PAYMENT_TOKEN and WALLET_RPC_URL)', 'PAYMENTS_NOT_CONFIGURED');
  return { token, rpcUrl, rpcTimeoutMs };
}

/** The payment settings with a client of their chain and viem, loaded on the first chain call. */
async function paymentChain() {
  const { token, rpcUrl, rpcTimeoutMs } = paymentSettings();
  return { token, client: await chainClient(rpcUrl, rpcTimeoutMs), viem: await import('./viem-payments') };
}

const chainUnavailable = (err: unknown) => {
  logger().warn('payment chain call failed', { reason: (err as Error)?.name ?? 'unknown' });
  return unavailable('the chain RPC is unavailable, try again', 'CHAIN_UNAVAILABLE');
};

export async function accountWallet(userId: string) {
  const wallet = await getWalletSummary(userId);
  if (!wallet) throw invalid('this account has no wallet: create one with POST /api/wallet', 'NO_WALLET');
  return wallet;
}

export async function tokenBalance(address: Hex): Promise<bigint> {
  const { token, client, viem } = await paymentChain();
  try {
    return await viem.readContract(client, { address: token.address, abi: viem.erc20Abi, functionName: 'balanceOf', args: [address] });
  } catch (err) {
    throw chainUnavailable(err);
  }
}

export interface SignedTransfer {
  hash: Hex;
  from: Hex;
  nonce: number;
  signedTransaction: Hex;
}

/** Signs an ERC-20 `transfer(to, units)` with the account's key at the next pending nonce (or `nonce`). */
export async function signTransfer(userId: string, to: Hex, units: bigint, nonce?: number): Promise<SignedTransfer> {
  const { token, client, viem } = await paymentChain();
  const { encodeFunctionData, erc20Abi, estimateGas, getChainId, getGasPrice, getTransactionCount, keccak256, privateKeyToAccount } = viem;
  const sealed = await getWalletKeyRecord(userId);
  if (!sealed) throw invalid('this account has no wallet: create one with POST /api/wallet', 'NO_WALLET');
  const account = privateKeyToAccount(await openWalletKey(userId, sealed));
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, units] });
  try {
    const [chainId, nextNonce, gasPrice, gas] = await Promise.all([
      getChainId(client),
      nonce === undefined ? getTransactionCount(client, { address: account.address, blockTag: 'pending' }) : Promise.resolve(nonce),
      getGasPrice(client),
      estimateGas(client, { account: account.address, to: token.address, data }),
    ]);
    const signedTransaction = await account.signTransaction({
      type: 'eip1559',
      chainId,
      nonce: nextNonce,
      to: token.address,
      data,
      // Headroom over the estimate; fees at twice the current price so a busy block still takes it.
      gas: (gas * 12n) / 10n,
      maxFeePerGas: gasPrice * 2n,
      maxPriorityFeePerGas: gasPrice,
    });
    return { hash: keccak256(signedTransaction), from: account.address, nonce: nextNonce, signedTransaction };
  } catch (err) {
    throw chainUnavailable(err);
  }
}

/** `sent`, or `known` when the chain already has this very transaction (a resend); a refusal throws. */
export async function broadcast(signedTransaction: Hex): Promise<'sent' | 'known'> {
  const { client, viem } = await paymentChain();
  try {
    await viem.sendRawTransaction(client, { serializedTransaction: signedTransaction });
    return 'sent';
  } catch (err) {
    const text = String((err as Error)?.message ?? '');
    // A resend of the very same bytes; a different transaction at a used nonce is a refusal.
    if (/already known/i.test(text)) return 'known';
    throw chainUnavailable(err);
  }
}

export type ReceiptState = { state: 'pending' } | { state: 'confirmed' | 'failed'; blockNumber: string };

export async function receiptOf(hash: Hex): Promise<ReceiptState> {
  const { client, viem } = await paymentChain();
  try {
    const receipt = await viem.getTransactionReceipt(client, { hash });
    return { state: receipt.status === 'success' ? 'confirmed' : 'failed', blockNumber: receipt.blockNumber.toString() };
  } catch (err) {
    if ((err as Error)?.name === 'TransactionReceiptNotFoundError') return { state: 'pending' };
    throw chainUnavailable(err);
  }
}

// --- the daily limit every send from the wallet counts against (usdc-payments, instant-split) ---
export const dayOf = (now: Date) => now.toISOString().slice(0, 10);

export async function dailyLimitMicros(userId: string) {
  return (await getDailyLimitMicros(userId)) ?? Number(toMicros(DEFAULT_DAILY_PAYMENT_LIMIT));
}

/** Reserves `micros` of the day's limit, or 400 DAILY_LIMIT_EXCEEDED with the limit and what was sent. */
export async function reserveDailySend(userId: string, day: string, micros: number): Promise<void> {
  const limit = await dailyLimitMicros(userId);
  try {
    await reserveDaily(userId, day, micros, limit);
  } catch (err) {
    if (!(err instanceof DailyLimitExceededError)) throw err;
    const sent = await sentOnDay(userId, day);
    throw invalid('this transfer would pass the daily limit', 'DAILY_LIMIT_EXCEEDED', {
      dailyLimit: fromMicros(BigInt(limit)),
      sentToday: fromMicros(BigInt(sent)),
    });
  }
}
