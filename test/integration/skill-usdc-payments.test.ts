import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/usdc-payments';
import * as keys from '#data/keys';
import { call, subscribedSession } from '../helpers/api';
import { tenant } from '#data/tenant';
import { leaksKey, newRecipient, startPaymentsChain, type PaymentsChain } from '../helpers/payments-chain';
import { newTestUserId, runSkill } from '../helpers/skill-call';

let env: PaymentsChain;
beforeAll(async () => {
  env = await startPaymentsChain();
});
afterAll(async () => {
  await env.stop();
});

const USDC = (n: number) => BigInt(Math.round(n * 1_000_000));

describe('usdc-payments on the local chain', () => {
  it('sends a real ERC-20 transfer: balances move, the record is pending until its receipt settles it', async () => {
    const userId = newTestUserId();
    const { address, privateKey } = await env.fundedWallet(userId, USDC(100));
    const to = newRecipient();
    env.chain.autoMine = false;
    const sent = await runSkill(skill, userId, { action: 'send', to, amount: '25.5', memo: 'deposit' });
    expect(sent.status).toBe(200);
    expect(sent.body.transfer).toMatchObject({ from: address, to, amount: '25.5', symbol: 'USDC', status: 'pending' });
    const hash = sent.body.transfer.hash;
    expect((await runSkill(skill, userId, { action: 'status', hash })).body.transfer.status).toBe('pending');
    await env.chain.minePending();
    env.chain.autoMine = true;
    const settled = await runSkill(skill, userId, { action: 'status', hash });
    expect(settled.body.transfer).toMatchObject({ status: 'confirmed', hash });
    expect(await env.balance(to)).toBe(USDC(25.5));
    expect(await env.balance(address)).toBe(USDC(74.5));
    const listed = await runSkill(skill, userId, { action: 'list' });
    expect(listed.body).toMatchObject({ count: 1, transfers: [{ hash, status: 'confirmed' }] });
    const balance = await runSkill(skill, userId, { action: 'get_balance' });
    expect(balance.body).toMatchObject({ balance: '74.5', dailyLimit: '100.000000', sentToday: '25.500000', remainingToday: '74.500000' });
    // No key material in any answer, any stored payment record or any log line.
    const texts = [sent, settled, listed, balance].map((r) => JSON.stringify(r.body));
    texts.push(JSON.stringify(await tenant(userId).queryAll(keys.stablecoinTransferPrefix)), ...env.logLines);
    expect(texts.some((t) => leaksKey(t, privateKey))).toBe(false);
  });

  it('checks the balance first: short → 402 INSUFFICIENT_BALANCE and nothing is signed or sent', async () => {
    const userId = newTestUserId();
    const { address } = await env.fundedWallet(userId, USDC(10));
    const res = await runSkill(skill, userId, { action: 'send', to: newRecipient(), amount: '10.000001' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_BALANCE', balance: '10', amount: '10.000001' });
    expect(env.chain.transactionCount(address)).toBe(0);
    expect(await env.balance(address)).toBe(USDC(10));
    expect((await runSkill(skill, userId, { action: 'list' })).body).toMatchObject({ transfers: [], count: 0 });
  });

  it('keeps the daily limit the user sets, also for concurrent sends', async () => {
    const userId = newTestUserId();
    const { address } = await env.fundedWallet(userId, USDC(1000));
    expect((await runSkill(skill, userId, { action: 'set_daily_limit', amount: '30' })).body.dailyLimit).toBe('30.000000');
    const to = newRecipient();
    expect((await runSkill(skill, userId, { action: 'send', to, amount: '20' })).status).toBe(200);
    const over = await runSkill(skill, userId, { action: 'send', to, amount: '10.01' });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 'DAILY_LIMIT_EXCEEDED', dailyLimit: '30.000000', sentToday: '20.000000' });
    // Tomorrow the limit starts again.
    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
    expect((await runSkill(skill, userId, { action: 'send', to, amount: '30' }, { now: tomorrow })).status).toBe(200);
    expect(await env.balance(to)).toBe(USDC(50));
    expect(await env.balance(address)).toBe(USDC(950));
    // Five racing sends of 3 against 10 left today: at most three get through.
    const racing = await Promise.all(Array.from({ length: 5 }, () => runSkill(skill, userId, { action: 'send', to: newRecipient(), amount: '3' })));
    expect(racing.filter((r) => r.status === 200).length).toBe(3);
    expect(racing.every((r) => r.status === 200 || r.body.code === 'DAILY_LIMIT_EXCEEDED')).toBe(true);
  });

  it('five concurrent sends from one wallet take one nonce each: all land, balances exact', async () => {
    const userId = newTestUserId();
    const { address } = await env.fundedWallet(userId, USDC(100));
    const recipients = Array.from({ length: 5 }, () => newRecipient());
    const sent = await Promise.all(recipients.map((to, i) => runSkill(skill, userId, { action: 'send', to, amount: `${i + 1}.5` })));
    expect(sent.map((r) => [r.status, r.body.code])).toEqual(recipients.map(() => [200, undefined]));
    expect(new Set(sent.map((r) => r.body.transfer.hash)).size).toBe(5);
    expect(env.chain.transactionCount(address)).toBe(5);
    expect(await Promise.all(recipients.map((r) => env.balance(r)))).toEqual([1.5, 2.5, 3.5, 4.5, 5.5].map(USDC));
    expect(await env.balance(address)).toBe(USDC(100 - 17.5));
    const nonces = (await tenant(userId).queryAll<{ nonce: number }>(keys.stablecoinTransferPrefix)).map((t) => t.nonce).sort();
    expect(nonces).toEqual([0, 1, 2, 3, 4]);
  });

  it('refuses invalid bodies per action, and a send without a wallet', async () => {
    const userId = newTestUserId();
    const bad: Record<string, unknown>[] = [
      { action: 'send', to: '0x12', amount: '1' },
      { action: 'send', to: newRecipient(), amount: '0' },
      { action: 'send', to: newRecipient(), amount: '1.0000001' },
      { action: 'set_daily_limit', amount: '-1' },
      { action: 'status', hash: '0x1234' },
      { action: 'get_balance', extra: true },
      { action: 'list', all: true },
    ];
    for (const body of bad) expect((await runSkill(skill, userId, body)).status, JSON.stringify(body)).toBe(400);
    expect((await runSkill(skill, userId, { action: 'send', to: newRecipient(), amount: '1' })).body.code).toBe('NO_WALLET');
    expect((await runSkill(skill, userId, { action: 'status', hash: `0x${'ab'.repeat(32)}` })).status).toBe(404);
  });

  it('an Idempotency-Key retry over HTTP replays the answer and pays once', async () => {
    const session = await subscribedSession();
    const { address } = await env.fundedWallet(session.userId, USDC(50));
    const to = newRecipient();
    const headers = { 'idempotency-key': randomUUID() };
    const body = { action: 'send', to, amount: '12.25' };
    const first = await call('POST', '/api/skills/usdc-payments', { session, body, headers });
    const second = await call('POST', '/api/skills/usdc-payments', { session, body, headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.transfer.hash).toBe(first.body.transfer.hash);
    expect(env.chain.transactionCount(address)).toBe(1);
    expect(await env.balance(to)).toBe(USDC(12.25));
  });
});
