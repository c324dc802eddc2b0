import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { instantSplitBodies as bodies } from '#contract/skill-actions/payments';
import {
  advanceLeg,
  closeExecution,
  createSplitRule,
  ExecutionOpenError,
  getSplitLeg,
  getSplitRule,
  listSplitLegs,
  listSplitRules,
  openExecution,
  type SplitLeg,
  type SplitRule,
} from '#data/skills/splits';
import { conflict, invalid, notFound, paymentRequired } from '#platform/errors';
import { fromMicros, toMicros } from '../decimal';
import { MICROS, numberToMicros, splitShares } from '../settlement';
import { action, type SkillCall, type SkillModule } from '#domain/skills/skill-module';
import { accountWallet, broadcast, dayOf, paymentSettings, receiptOf, reserveDailySend, signTransfer, tokenBalance } from '../wallet-transfer';
import { releaseDaily } from '#data/skills/payments';
import { withWalletSend } from '#data/skills/wallet-lock';

/**
 * Revenue splits paid from the account's wallet in the payment token. A rule's percentages total
 * exactly 100 (compared in exact micro-units). Executing a rule records every leg before anything
 * is signed, then pays each leg once (see data/skills/splits.ts); shares are rounded down to
 * the token's unit and the units left over go to the first recipient, so the legs add up to the
 * amount exactly. `simulate` is pure computation: revenue = streams × rate, shared the same way.
 */
const HUNDRED_PERCENT = 100n * MICROS;

const ruleView = (r: SplitRule) => ({
  splitId: r.splitId,
  recipients: r.recipients,
  threshold: r.threshold,
  createdAt: r.createdAt,
  openExecution: r.openExecution ?? null,
});
const legView = (l: SplitLeg) => ({
  splitId: l.splitId,
  executionId: l.executionId,
  recipientAddress: l.recipientAddress,
  amount: l.amount,
  status: l.status,
  hash: l.hash ?? null,
});

async function requireRule(userId: string, splitId: string) {
  const rule = await getSplitRule(userId, splitId);
  if (!rule) throw notFound('no split rule with this id');
  return rule;
}

/** Takes one leg as far as it goes: sign (recorded), broadcast, then read its receipt. */
async function payLeg(call: SkillCall, leg: SplitLeg): Promise<SplitLeg> {
  let current = leg;
  if (current.status === 'prepared' || current.status === 'signed') {
    // From the nonce to the broadcast the wallet is this leg's alone (see wallet-lock.ts).
    current = await withWalletSend(call.userId, async () => {
      let held = (await getSplitLeg(call.userId, current))!;
      if (held.status === 'prepared') {
        const signed = await signTransfer(call.userId, held.recipientAddress as Hex, BigInt(held.units));
        await advanceLeg(call.userId, held, 'prepared', 'signed', { hash: signed.hash, signedTransaction: signed.signedTransaction, nonce: signed.nonce });
        // Whoever won the write, the recorded bytes are the ones that get sent.
        held = (await getSplitLeg(call.userId, held))!;
      }
      if (held.status === 'signed') {
        await broadcast(held.signedTransaction as Hex);
        await advanceLeg(call.userId, held, 'signed', 'pending');
        held = (await getSplitLeg(call.userId, held))!;
      }
      return held;
    });
  }
  if (current.status === 'pending') {
    const receipt = await receiptOf(current.hash as Hex);
    if (receipt.state !== 'pending') {
      const settledHere = await advanceLeg(
        call.userId,
        current,
        'pending',
        receipt.state,
        { settledAt: call.now.toISOString() },
        Number(toMicros(current.amount)),
      );
      // A leg the chain refused paid nothing: its amount goes back to the day it was counted on, once.
      if (settledHere && receipt.state === 'failed') await releaseDaily(call.userId, current.createdAt.slice(0, 10), Number(toMicros(current.amount)));
      current = (await getSplitLeg(call.userId, current))!;
    }
  }
  return current;
}

async function startExecution(call: SkillCall, rule: SplitRule, amount: string | undefined) {
  const { token } = paymentSettings();
  const { formatUnits, parseUnits } = await import('../viem-payments');
  const wallet = await accountWallet(call.userId);
  const balance = await tokenBalance(wallet.address);
  const units = amount === undefined ? balance : parseUnits(amount, token.decimals);
  if (amount !== undefined && (amount.split('.')[1] ?? '').length > token.decimals) {
    throw invalid(`${token.symbol} has ${token.decimals} decimals`, 'INVALID_AMOUNT');
  }
  const threshold = parseUnits(rule.threshold, token.decimals);
  if (units <= 0n || units < threshold) {
    throw invalid('the amount to split is below the rule threshold', 'BELOW_THRESHOLD', {
      amount: formatUnits(units, token.decimals),
      threshold: rule.threshold,
    });
  }
  if (balance < units) {
    throw paymentRequired(`insufficient ${token.symbol} balance`, 'INSUFFICIENT_BALANCE', { balance: formatUnits(balance, token.decimals) });
  }
  const shares = splitShares(
    units,
    rule.recipients.map((r) => toMicros(r.percentage)),
  );
  const execution = { executionId: `exe_${randomBytes(8).toString('hex')}`, amount: formatUnits(units, token.decimals), startedAt: call.now.toISOString() };
  const legs: SplitLeg[] = rule.recipients.map((r, i) => ({
    splitId: rule.splitId,
    executionId: execution.executionId,
    recipientAddress: r.recipientAddress,
    amount: formatUnits(shares[i]!, token.decimals),
    units: shares[i]!.toString(),
    status: 'prepared',
    createdAt: call.now.toISOString(),
  }));
  // The whole amount counts against the wallet's daily limit, as a usdc-payments send does.
  const day = dayOf(call.now);
  const micros = Number(toMicros(execution.amount));
  await reserveDailySend(call.userId, day, micros);
  try {
    await openExecution(
      call.userId,
      rule.splitId,
      execution,
      legs.filter((l) => BigInt(l.units) > 0n),
    );
  } catch (err) {
    // Another call opened the execution first (it counted its own amount), or nothing was opened.
    await releaseDaily(call.userId, day, micros);
    if (!(err instanceof ExecutionOpenError)) throw err;
  }
}

export const skill: SkillModule = {
  name: 'instant-split',
  actions: {
    create_split_rule: action(bodies().create_split_rule, async (call, body) => {
      const recipients = Array.isArray(body.splits) ? body.splits : [body.splits];
      const total = recipients.reduce((sum, r) => sum + numberToMicros(r.percentage), 0n);
      if (total !== HUNDRED_PERCENT) {
        throw invalid('the split percentages must total exactly 100', 'SPLIT_NOT_100', { total: fromMicros(total) });
      }
      const { getAddress, isAddress, zeroAddress } = await import('../viem-payments');
      const seen = new Set<string>();
      for (const r of recipients) {
        if (!isAddress(r.recipientAddress) || r.recipientAddress.toLowerCase() === zeroAddress) {
          throw invalid(`not a valid recipient address: ${r.recipientAddress}`, 'INVALID_RECIPIENT');
        }
        if (seen.has(r.recipientAddress.toLowerCase())) throw invalid('each recipient may appear once', 'DUPLICATE_RECIPIENT');
        seen.add(r.recipientAddress.toLowerCase());
      }
      const rule: SplitRule = {
        splitId: `split_${randomBytes(8).toString('hex')}`,
        recipients: recipients.map((r) => ({
          recipientAddress: getAddress(r.recipientAddress),
          percentage: fromMicros(numberToMicros(r.percentage)),
          ...(r.role ? { role: r.role } : {}),
          ...(r.name ? { name: r.name } : {}),
        })),
        threshold: fromMicros(numberToMicros(body.threshold ?? 0)),
        createdAt: call.now.toISOString(),
      };
      await createSplitRule(call.userId, rule);
      return { rule: ruleView(rule) };
    }),
    list_pending: action(bodies().list_pending, async (call) => {
      const [rules, legs] = await Promise.all([listSplitRules(call.userId), listSplitLegs(call.userId)]);
      const pending = legs.filter((l) => l.status !== 'confirmed').map(legView);
      return { rules: rules.map(ruleView), pending, count: pending.length };
    }),
    get_balance: action(bodies().get_balance, async (call) => {
      const { token } = paymentSettings();
      const { formatUnits, parseUnits } = await import('../viem-payments');
      const wallet = await accountWallet(call.userId);
      const [balance, rules] = await Promise.all([tokenBalance(wallet.address), listSplitRules(call.userId)]);
      return {
        address: wallet.address,
        symbol: token.symbol,
        balance: formatUnits(balance, token.decimals),
        rules: rules.map((r) => ({ splitId: r.splitId, threshold: r.threshold, ready: balance > 0n && balance >= parseUnits(r.threshold, token.decimals) })),
      };
    }),
    execute_split: action(bodies().execute_split, async (call, body) => {
      let rule = await requireRule(call.userId, body.splitId);
      const resumed = !!rule.openExecution;
      if (!rule.openExecution) {
        await startExecution(call, rule, body.amount);
        rule = await requireRule(call.userId, body.splitId);
      }
      const execution = rule.openExecution;
      if (!execution) throw conflict('the split could not be started, try again', 'SPLIT_BUSY');
      const order = (l: SplitLeg) => rule.recipients.findIndex((r) => r.recipientAddress === l.recipientAddress);
      const legs = (await listSplitLegs(call.userId, rule.splitId)).filter((l) => l.executionId === execution.executionId).sort((a, b) => order(a) - order(b));
      const paid: SplitLeg[] = [];
      // One leg after the other: each signs at the next nonce once the one before is broadcast.
      for (const leg of legs) paid.push(await payLeg(call, leg));
      const done = paid.every((l) => l.status === 'confirmed' || l.status === 'failed');
      if (done) await closeExecution(call.userId, rule.splitId, execution.executionId);
      return { execution: { ...execution, resumed, complete: done }, legs: paid.map(legView) };
    }),
    simulate: action(bodies().simulate, async (call, body) => {
      const revenue = BigInt(body.streams) * numberToMicros(body.rate);
      const rule = body.splitId ? await requireRule(call.userId, body.splitId) : undefined;
      const shares = rule
        ? splitShares(
            revenue,
            rule.recipients.map((r) => toMicros(r.percentage)),
          )
        : [];
      return {
        simulated: true,
        streams: body.streams,
        rate: fromMicros(numberToMicros(body.rate)),
        revenue: fromMicros(revenue),
        shares: rule ? rule.recipients.map((r, i) => ({ recipientAddress: r.recipientAddress, percentage: r.percentage, amount: fromMicros(shares[i]!) })) : [],
      };
    }),
  },
};
