import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/instant-split';
import { skill as payments } from '#functions/http/skills/skills/usdc-payments';
import * as keys from '#data/keys';
import { call, subscribedSession } from '../helpers/api';
import { tenant } from '#data/tenant';
import { leaksKey, newRecipient, startPaymentsChain, type PaymentsChain } from '../helpers/payments-chain';
import { newTestUserId, runSkill } from '../helpers/skill-call';

let env: PaymentsChain;
beforeAll(async () => {
  env = await startPaymentsChain();
});
afterEach(() => {
  env.chain.autoMine = true;
});
afterAll(async () => {
  await env.stop();
});

const rule = (recipients: string[], percentages: number[], threshold?: number) => ({
  action: 'create_split_rule',
  splits: recipients.map((recipientAddress, i) => ({ recipientAddress, percentage: percentages[i]!, name: `r${i}` })),
  ...(threshold !== undefined ? { threshold } : {}),
});

describe('instant-split', () => {
  it('refuses rules that do not total exactly 100, bad or repeated addresses, and bad bodies', async () => {
    const userId = newTestUserId();
    const [a, b] = [newRecipient(), newRecipient()];
    const short = await runSkill(skill, userId, rule([a, b], [60, 39.999999]));
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ code: 'SPLIT_NOT_100', total: '99.999999' });
    expect((await runSkill(skill, userId, rule([a, b], [60, 40.000001]))).body.code).toBe('SPLIT_NOT_100');
    // 0.1 + 0.2 + 99.7 is exactly 100 here (floats would say 99.99999999999999 or so).
    expect((await runSkill(skill, userId, rule([a, b, newRecipient()], [0.1, 0.2, 99.7]))).status).toBe(200);
    expect((await runSkill(skill, userId, rule([a, a], [50, 50]))).body.code).toBe('DUPLICATE_RECIPIENT');
    const badChecksum = a.toLowerCase().replace(/[a-f]/, (c) => c.toUpperCase());
    expect((await runSkill(skill, userId, rule([badChecksum, b], [50, 50]))).body.code).toBe('INVALID_RECIPIENT');
    expect((await runSkill(skill, userId, rule(['0x0000000000000000000000000000000000000000', b], [50, 50]))).body.code).toBe('INVALID_RECIPIENT');
    const bad: Record<string, unknown>[] = [
      rule(['0x12', b], [50, 50]),
      { action: 'create_split_rule' },
      { action: 'execute_split' },
      { action: 'simulate', streams: -1, rate: 0.004 },
      { action: 'simulate', streams: 1.5, rate: 0.004 },
      { action: 'list_pending', extra: 1 },
      { action: 'get_balance', splitId: 'x' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues?.length).toBeGreaterThan(0);
    }
  });

  it('simulates streams × rate exactly and splits it by a rule (worked by hand)', async () => {
    const userId = newTestUserId();
    // 1,234,567 streams × 0.003921 = 4840.737207.
    const plain = await runSkill(skill, userId, { action: 'simulate', streams: 1_234_567, rate: 0.003921 });
    expect(plain.body).toMatchObject({ revenue: '4840.737207', shares: [] });
    const created = await runSkill(skill, userId, rule([newRecipient(), newRecipient(), newRecipient()], [50, 30, 20]));
    const splitId = created.body.rule.splitId;
    // 50% = 2420.3686035 → 2420.368603 (+ the 1 left over) ; 30% = 1452.2211621 → 1452.221162 ; 20% = 968.1474414 → 968.147441.
    const shared = await runSkill(skill, userId, { action: 'simulate', streams: 1_234_567, rate: 0.003921, splitId });
    expect(shared.body.shares.map((s: any) => s.amount)).toEqual(['2420.368604', '1452.221162', '968.147441']);
    expect((await runSkill(skill, userId, { action: 'list_pending' })).body.count).toBe(0);
    expect((await runSkill(skill, newTestUserId(), { action: 'list_pending' })).body).toMatchObject({ rules: [], pending: [], count: 0 });
  });

  it('executes a split on chain: each recipient paid once, exact balances, a retry never pays twice', async () => {
    const userId = newTestUserId();
    const { address, privateKey } = await env.fundedWallet(userId, 150_000_000n);
    await runSkill(payments, userId, { action: 'set_daily_limit', amount: '1000' });
    const recipients = [newRecipient(), newRecipient(), newRecipient()];
    const splitId = (await runSkill(skill, userId, rule(recipients, [50, 30, 20], 10))).body.rule.splitId;
    expect((await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '9.99' })).body.code).toBe('BELOW_THRESHOLD');
    expect((await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '150.000001' })).body.code).toBe('INSUFFICIENT_BALANCE');

    env.chain.autoMine = false;
    const first = await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '100.000001' });
    expect(first.status).toBe(200);
    expect(first.body.execution).toMatchObject({ amount: '100.000001', complete: false, resumed: false });
    expect(first.body.legs.map((l: any) => [l.amount, l.status])).toEqual([
      ['50.000001', 'pending'],
      ['30', 'pending'],
      ['20', 'pending'],
    ]);
    expect(env.chain.transactionCount(address)).toBe(3);
    const pending = await runSkill(skill, userId, { action: 'list_pending' });
    expect(pending.body.count).toBe(3);
    // A retry while the legs are still unmined resumes the same execution and sends nothing new.
    const retry = await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '100.000001' });
    expect(retry.body.execution).toMatchObject({ executionId: first.body.execution.executionId, resumed: true, complete: false });
    expect(env.chain.transactionCount(address)).toBe(3);
    await env.chain.minePending();
    env.chain.autoMine = true;
    const settled = await runSkill(skill, userId, { action: 'execute_split', splitId });
    expect(settled.body.execution).toMatchObject({ executionId: first.body.execution.executionId, complete: true });
    expect(settled.body.legs.every((l: any) => l.status === 'confirmed')).toBe(true);
    expect(await Promise.all(recipients.map((r) => env.balance(r)))).toEqual([50_000_001n, 30_000_000n, 20_000_000n]);
    expect(await env.balance(address)).toBe(49_999_999n);
    expect(env.chain.transactionCount(address)).toBe(3);
    expect((await runSkill(skill, userId, { action: 'list_pending' })).body.count).toBe(0);
    const balance = await runSkill(skill, userId, { action: 'get_balance' });
    expect(balance.body).toMatchObject({ balance: '49.999999', rules: [{ splitId, threshold: '10.000000', ready: true }] });
    const texts = [first, retry, settled, balance].map((r) => JSON.stringify(r.body));
    texts.push(JSON.stringify(await tenant(userId).queryAll(keys.splitLegPrefix)), ...env.logLines);
    expect(texts.some((t) => leaksKey(t, privateKey))).toBe(false);
  });

  it('concurrent executions of one rule pay each recipient exactly once', async () => {
    const userId = newTestUserId();
    const { address } = await env.fundedWallet(userId, 10_000_000n);
    const recipients = [newRecipient(), newRecipient()];
    const splitId = (await runSkill(skill, userId, rule(recipients, [75, 25]))).body.rule.splitId;
    const results = await Promise.all(Array.from({ length: 4 }, () => runSkill(skill, userId, { action: 'execute_split', splitId, amount: '10' })));
    expect(results.some((r) => r.status === 200)).toBe(true);
    expect(env.chain.transactionCount(address)).toBe(2);
    expect(await Promise.all(recipients.map((r) => env.balance(r)))).toEqual([7_500_000n, 2_500_000n]);
    expect(await env.balance(address)).toBe(0n);
  });

  it("counts against the wallet's daily limit, shared with usdc-payments sends", async () => {
    const userId = newTestUserId();
    const { address } = await env.fundedWallet(userId, 100_000_000n);
    expect((await runSkill(payments, userId, { action: 'set_daily_limit', amount: '30' })).status).toBe(200);
    const recipients = [newRecipient(), newRecipient()];
    const splitId = (await runSkill(skill, userId, rule(recipients, [50, 50]))).body.rule.splitId;
    const over = await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '30.000001' });
    expect([over.status, over.body]).toEqual([400, expect.objectContaining({ code: 'DAILY_LIMIT_EXCEEDED', dailyLimit: '30.000000', sentToday: '0.000000' })]);
    expect(env.chain.transactionCount(address)).toBe(0);
    expect((await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '20' })).status).toBe(200);
    // 20 of 30 is spent: a send of 10.01 passes the limit, 10 fits.
    const send = (amount: string) => runSkill(payments, userId, { action: 'send', to: newRecipient(), amount });
    expect((await send('10.01')).body).toMatchObject({ code: 'DAILY_LIMIT_EXCEEDED', sentToday: '20.000000' });
    expect((await send('10')).status).toBe(200);
    expect((await runSkill(skill, userId, { action: 'execute_split', splitId, amount: '1' })).body.code).toBe('DAILY_LIMIT_EXCEEDED');
    expect(await Promise.all(recipients.map((r) => env.balance(r)))).toEqual([10_000_000n, 10_000_000n]);
    expect(await env.balance(address)).toBe(70_000_000n);
  });

  it('answers GET with the read-only actions', async () => {
    const session = await subscribedSession();
    const sim = await call('GET', '/api/skills/instant-split?action=simulate&streams=1000&rate=0.004', { session });
    expect(sim.body).toMatchObject({ success: true, revenue: '4.000000' });
    expect((await call('GET', '/api/skills/instant-split', { session })).body).toMatchObject({ success: true, count: 0 });
  });
});
