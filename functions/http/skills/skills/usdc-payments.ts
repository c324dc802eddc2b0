import type { Hex } from 'viem';
import { usdcPaymentsBodies as bodies } from '#contract/skill-actions/payments';
import {
  getTransfer,
  listTransfers,
  recordTransfer,
  releaseDaily,
  sentOnDay,
  setDailyLimitMicros,
  settleTransfer,
  type StablecoinTransfer,
} from '#data/skills/payments';
import { fromMicros, toMicros } from '../decimal';
import { action, type SkillCall, type SkillModule } from '#domain/skills/skill-module';
import {
  accountWallet,
  broadcast,
  dailyLimitMicros,
  dayOf,
  paymentSettings,
  receiptOf,
  reserveDailySend,
  signTransfer,
  tokenBalance,
} from '../wallet-transfer';
import { withWalletSend } from '#data/skills/wallet-lock';
import { DomainError, invalid, notFound, paymentRequired } from '#platform/errors';

/**
 * Stablecoin payments from the account's wallet: balance checked first, then the day's limit
 * reserved, then the transfer signed and recorded (hash, `pending`) before it is broadcast. `status`
 * and `list` read the receipt and settle it; a transfer that failed on chain gives its amount back
 * to the day's limit.
 */
const LIST_SETTLE_MAX = 20;

const view = (t: StablecoinTransfer) => ({
  hash: t.hash,
  from: t.from,
  to: t.to,
  amount: t.amount,
  symbol: t.symbol,
  memo: t.memo ?? null,
  status: t.status,
  createdAt: t.createdAt,
  settledAt: t.settledAt ?? null,
  blockNumber: t.blockNumber ?? null,
});

/** Reads the receipt of a pending transfer and records the outcome (once). */
async function settle(call: SkillCall, transfer: StablecoinTransfer): Promise<StablecoinTransfer> {
  if (transfer.status !== 'pending') return transfer;
  const receipt = await receiptOf(transfer.hash as Hex);
  if (receipt.state === 'pending') return transfer;
  const settledAt = call.now.toISOString();
  if (await settleTransfer(call.userId, transfer.hash, receipt.state, settledAt, receipt.blockNumber, transfer.amountMicros)) {
    if (receipt.state === 'failed') await releaseDaily(call.userId, transfer.day, transfer.amountMicros);
  }
  return (await getTransfer(call.userId, transfer.hash)) ?? transfer;
}

export const skill: SkillModule = {
  name: 'usdc-payments',
  actions: {
    send: action(bodies().send, async (call, body) => {
      const { token } = paymentSettings();
      const { formatUnits, getAddress, parseUnits } = await import('../viem-payments');
      const fraction = body.amount.split('.')[1] ?? '';
      if (fraction.length > token.decimals) throw invalid(`${token.symbol} has ${token.decimals} decimals`, 'INVALID_AMOUNT');
      const wallet = await accountWallet(call.userId);
      const units = parseUnits(body.amount, token.decimals);
      const balance = await tokenBalance(wallet.address);
      if (balance < units) {
        throw paymentRequired(`insufficient ${token.symbol} balance`, 'INSUFFICIENT_BALANCE', {
          balance: formatUnits(balance, token.decimals),
          amount: body.amount,
          symbol: token.symbol,
        });
      }
      const micros = Number(toMicros(body.amount));
      const day = dayOf(call.now);
      await reserveDailySend(call.userId, day, micros);
      // From the nonce to the broadcast the wallet is this send's alone (see wallet-lock.ts).
      const transfer = await withWalletSend(call.userId, async () => {
        let signedTransfer: StablecoinTransfer;
        try {
          const signed = await signTransfer(call.userId, getAddress(body.to), units);
          signedTransfer = {
            hash: signed.hash,
            from: signed.from,
            to: getAddress(body.to),
            amount: formatUnits(units, token.decimals),
            amountMicros: micros,
            symbol: token.symbol,
            ...(body.memo ? { memo: body.memo } : {}),
            status: 'pending',
            day,
            nonce: signed.nonce,
            signedTransaction: signed.signedTransaction,
            createdAt: call.now.toISOString(),
          };
          await recordTransfer(call.userId, signedTransfer);
        } catch (err) {
          await releaseDaily(call.userId, day, micros);
          throw err;
        }
        try {
          await broadcast(signedTransfer.signedTransaction as Hex);
        } catch (err) {
          if (await settleTransfer(call.userId, signedTransfer.hash, 'failed', call.now.toISOString())) await releaseDaily(call.userId, day, micros);
          throw err;
        }
        return signedTransfer;
      }).catch(async (err) => {
        // Waited too long for the wallet: nothing was signed, so the day's reservation goes back.
        if (err instanceof DomainError && err.code === 'WALLET_BUSY') await releaseDaily(call.userId, day, micros);
        throw err;
      });
      return { transfer: view(transfer) };
    }),
    get_balance: action(bodies().get_balance, async (call) => {
      const { token } = paymentSettings();
      const { formatUnits } = await import('../viem-payments');
      const wallet = await accountWallet(call.userId);
      const [balance, limit, sent] = await Promise.all([tokenBalance(wallet.address), dailyLimitMicros(call.userId), sentOnDay(call.userId, dayOf(call.now))]);
      return {
        address: wallet.address,
        symbol: token.symbol,
        balance: formatUnits(balance, token.decimals),
        dailyLimit: fromMicros(BigInt(limit)),
        sentToday: fromMicros(BigInt(sent)),
        remainingToday: fromMicros(BigInt(Math.max(0, limit - sent))),
      };
    }),
    set_daily_limit: action(bodies().set_daily_limit, async (call, body) => {
      const micros = Number(toMicros(body.amount));
      await setDailyLimitMicros(call.userId, micros, call.now);
      return { dailyLimit: fromMicros(BigInt(micros)) };
    }),
    status: action(bodies().status, async (call, body) => {
      const transfer = await getTransfer(call.userId, body.hash);
      if (!transfer) throw notFound('no transfer with this hash');
      return { transfer: view(await settle(call, transfer)) };
    }),
    list: action(bodies().list, async (call) => {
      const all = (await listTransfers(call.userId)).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const pending = all.filter((t) => t.status === 'pending').slice(0, LIST_SETTLE_MAX);
      const settled = new Map((await Promise.all(pending.map((t) => settle(call, t)))).map((t) => [t.hash, t]));
      const transfers = all.map((t) => view(settled.get(t.hash) ?? t));
      return { transfers, count: transfers.length };
    }),
  },
};
