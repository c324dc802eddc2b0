import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/treasury';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { startFakeJsonRpc, type FakeJsonRpc } from '../helpers/fake-json-rpc';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const OWN = '0x1000000000000000000000000000000000000001';
const TRACKED_A = '0x2000000000000000000000000000000000000002';
const TRACKED_B = '0x3000000000000000000000000000000000000003';

let rpc: FakeJsonRpc;

beforeAll(async () => {
  rpc = await startFakeJsonRpc();
  reloadConfig({ WALLET_RPC_URL: rpc.url, TREASURY_TOKENS: `USDC:${USDC}:6` });
});
afterEach(() => {
  rpc.mode = 'ok';
});
afterAll(async () => {
  reloadConfig({ WALLET_RPC_URL: undefined, TREASURY_TOKENS: undefined });
  await rpc.close();
});

/** The account's own wallet as /api/wallet stores it (the key material is irrelevant here). */
const putAccountWallet = (userId: string, address: string) =>
  tenant(userId).put({
    ...keys.wallet(userId),
    userId,
    walletId: 'w1',
    address,
    network: 'l2-test',
    custody: 'platform',
    encryptedKey: {},
    createdAt: new Date().toISOString(),
  });

describe('treasury', () => {
  it('totals the account wallet and the tracked addresses exactly, from the chain (worked by hand)', async () => {
    const userId = newTestUserId();
    await putAccountWallet(userId, OWN);
    rpc.setBalance(OWN, 1_500_000_000_000_000_000n);
    rpc.setTokenBalance(USDC, OWN, 250_750_000n);
    rpc.setBalance(TRACKED_A, 250_000_000_000_000_000n);
    rpc.setTokenBalance(USDC, TRACKED_A, 1n);
    rpc.setTokenBalance(USDC, TRACKED_B, 1_000_000_000n);
    expect((await runSkill(skill, userId, { action: 'add_wallet', address: TRACKED_A, label: 'label float' })).status).toBe(200);
    expect((await runSkill(skill, userId, { action: 'add_wallet', address: TRACKED_B.toUpperCase().replace('0X', '0x') })).status).toBe(200);
    // The account's own address again is not counted twice.
    expect((await runSkill(skill, userId, { action: 'add_wallet', address: OWN })).status).toBe(200);

    const res = await runSkill(skill, userId, { action: 'get_balances' });
    expect(res.status).toBe(200);
    expect(res.body.assets).toEqual(['ETH', 'USDC']);
    expect(res.body.wallets.map((w: any) => [w.source, w.address.toLowerCase(), w.balances])).toEqual([
      ['account', OWN, { ETH: '1.5', USDC: '250.75' }],
      ['tracked', TRACKED_A, { ETH: '0.25', USDC: '0.000001' }],
      ['tracked', TRACKED_B, { ETH: '0', USDC: '1000' }],
    ]);
    // 1.5 + 0.25 + 0 = 1.75 ETH; 250.75 + 0.000001 + 1000 = 1250.750001 USDC.
    expect(res.body.totals).toEqual({ ETH: '1.75', USDC: '1250.750001' });
    expect(res.body.complete).toBe(true);
    expect(rpc.calls).toContain('eth_getBalance');
    expect(rpc.calls).toContain('eth_call');
  });

  it('a chain that fails marks wallets unavailable and the totals incomplete, never a guess', async () => {
    const userId = newTestUserId();
    await putAccountWallet(userId, OWN);
    rpc.mode = 'http-error';
    const res = await runSkill(skill, userId, { action: 'get_balances' });
    expect(res.status).toBe(200);
    expect(res.body.wallets).toEqual([{ address: OWN, label: 'account wallet', source: 'account', status: 'unavailable', balances: null }]);
    expect(res.body).toMatchObject({ totals: { ETH: '0', USDC: '0' }, complete: false });
  });

  it('tracks, lists and removes addresses; concurrent adds never pass the cap of 50', async () => {
    const userId = newTestUserId();
    const address = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
    // 46 tracked already (the counter is what the cap reads), then 8 at once: exactly 4 fit.
    await Promise.all(
      Array.from({ length: 46 }, (_, i) =>
        tenant(userId).put({ ...keys.treasuryWallet(userId, address(100 + i)), address: address(100 + i), addedAt: new Date().toISOString() }),
      ),
    );
    await tenant(userId).put({ ...keys.treasuryWalletCount(userId), wallets: 46 });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => runSkill(skill, userId, { action: 'add_wallet', address: address(i) })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect(results.filter((r) => r.status === 429).map((r) => r.body.code)).toEqual(Array(4).fill('TREASURY_WALLET_LIMIT'));
    expect((await runSkill(skill, userId, { action: 'list_wallets' })).body.count).toBe(50);
    const kept = results.findIndex((r) => r.status === 200);
    expect((await runSkill(skill, userId, { action: 'add_wallet', address: address(kept) })).status).toBe(409);
    expect((await runSkill(skill, userId, { action: 'remove_wallet', address: address(kept) })).status).toBe(200);
    expect((await runSkill(skill, userId, { action: 'remove_wallet', address: address(kept) })).status).toBe(404);
    expect((await runSkill(skill, userId, { action: 'add_wallet', address: address(kept) })).status).toBe(200);
  });

  it('an empty account has no wallets and zero totals; another user sees none of the tracked addresses', async () => {
    const owner = newTestUserId();
    await runSkill(skill, owner, { action: 'add_wallet', address: TRACKED_A });
    const intruder = newTestUserId();
    const res = await runSkill(skill, intruder, { action: 'get_balances' });
    expect(res.body).toMatchObject({ wallets: [], totals: { ETH: '0', USDC: '0' }, complete: true });
    expect((await runSkill(skill, intruder, { action: 'list_wallets' })).body).toEqual({ success: true, wallets: [], count: 0 });
    expect((await runSkill(skill, intruder, { action: 'remove_wallet', address: TRACKED_A })).status).toBe(404);
    expect((await runSkill(skill, owner, { action: 'list_wallets' })).body.count).toBe(1);
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'get_balances', currency: 'USDC' },
      { action: 'add_wallet', address: '0x123' },
      { action: 'add_wallet', address: TRACKED_A, label: '' },
      { action: 'remove_wallet' },
      { action: 'list_wallets', all: true },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
  });
});
