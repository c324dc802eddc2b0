import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { reloadConfig } from '#platform/config';
import { call, uniqueIp } from '../helpers/api';
import { refusedUrl, startFakeJsonRpc, type FakeJsonRpc } from '../helpers/fake-json-rpc';

const TOKEN = privateKeyToAccount(generatePrivateKey()).address;
const MIN = 10n ** 18n;
const holder = privateKeyToAccount(generatePrivateKey()).address;
const shortOf = privateKeyToAccount(generatePrivateKey()).address;
const exact = privateKeyToAccount(generatePrivateKey()).address;

let rpc: FakeJsonRpc;
beforeAll(async () => {
  rpc = await startFakeJsonRpc({ chainId: 8453 });
  rpc.setTokenBalance(TOKEN, holder, MIN + 1n);
  rpc.setTokenBalance(TOKEN, shortOf, MIN - 1n);
  rpc.setTokenBalance(TOKEN, exact, MIN);
});
afterAll(() => rpc.close());
afterEach(() => {
  reloadConfig({
    GATING_TOKEN_ADDRESS: undefined,
    GATING_MIN_BALANCE: undefined,
    GATING_RPC_URL: undefined,
    GATING_TOKEN_SYMBOL: undefined,
    CHAIN_RPC_TIMEOUT_MS: undefined,
    RATE_LIMITS: undefined,
  });
});

const gate = (rpcUrl = `${rpc.url}/v2/secret-provider-key`) =>
  reloadConfig({ GATING_TOKEN_ADDRESS: TOKEN, GATING_MIN_BALANCE: MIN.toString(), GATING_RPC_URL: rpcUrl, GATING_TOKEN_SYMBOL: 'AGNT' });

const post = (body: unknown) => call('POST', '/api/auth/token-gating/verify', { body, ip: uniqueIp() });
const get = (address: string) => call('GET', `/api/auth/token-gating/verify?address=${address}`, { ip: uniqueIp() });

describe('token gating on the ERC-20 balance (spec 4.2)', () => {
  it('with gating off everyone has access and nothing is read from a chain', async () => {
    const res = await post({ fid: '12345', address: shortOf });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fid: '12345', address: shortOf, hasAccess: true, tokenGated: false, chain: 'l2-main' });
    const status = await get(shortOf);
    expect(status.body).toMatchObject({ hasAccess: true, tokenGated: false, contractAddress: null, rpcEndpoint: 'https://mainnet.base.org' });
  });

  it('POST: a wallet over the minimum has access, one under does not; the answer has every field of the spec', async () => {
    gate();
    const over = await post({ fid: '12345', address: holder });
    expect(over.status).toBe(200);
    expect(Object.keys(over.body).sort()).toEqual(['address', 'chain', 'fid', 'hasAccess', 'message', 'minBalance', 'timestamp', 'token', 'tokenGated'].sort());
    expect(over.body).toMatchObject({
      fid: '12345',
      address: holder,
      hasAccess: true,
      tokenGated: true,
      minBalance: MIN.toString(),
      token: 'AGNT',
      chain: 'l2-main',
    });
    expect(Date.parse(over.body.timestamp)).toBeGreaterThan(Date.now() - 60_000);

    const under = await post({ fid: '12345', address: shortOf });
    expect(under.status).toBe(200);
    expect(under.body).toMatchObject({ hasAccess: false, tokenGated: true, minBalance: MIN.toString() });
    expect(under.body.message).not.toBe(over.body.message);

    expect((await post({ fid: '1', address: exact })).body.hasAccess).toBe(true);
    expect(rpc.calls).toContain('eth_chainId');
    expect(rpc.calls).toContain('eth_call');
  });

  it('GET: status with the contract address and the credential-free RPC endpoint', async () => {
    gate();
    const res = await get(holder.toLowerCase());
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['address', 'chain', 'contractAddress', 'hasAccess', 'minBalance', 'rpcEndpoint', 'token', 'tokenGated'].sort(),
    );
    expect(res.body).toMatchObject({
      hasAccess: true,
      tokenGated: true,
      contractAddress: TOKEN,
      rpcEndpoint: 'https://mainnet.base.org',
      minBalance: MIN.toString(),
    });
    expect(res.text).not.toContain('secret-provider-key');
    expect((await get(shortOf)).body.hasAccess).toBe(false);
  });

  it('bad input: 400 for a missing fid or address and for a malformed address', async () => {
    gate();
    for (const body of [
      { address: holder },
      { fid: '1' },
      { fid: '1', address: '0x1234' },
      { fid: '1', address: `${holder}00` },
      { fid: 'abc', address: holder },
    ]) {
      expect((await post(body)).status).toBe(400);
    }
    expect((await get('0xnothex')).status).toBe(400);
    expect((await call('GET', '/api/auth/token-gating/verify', { ip: uniqueIp() })).status).toBe(400);
  });

  it('an RPC that is down or too slow answers 503 CHAIN_UNAVAILABLE, never a hang', async () => {
    gate(await refusedUrl());
    const down = await post({ fid: '1', address: holder });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('CHAIN_UNAVAILABLE');

    const slow = await startFakeJsonRpc();
    slow.mode = 'hang';
    try {
      gate(slow.url);
      reloadConfig({ CHAIN_RPC_TIMEOUT_MS: '300' });
      const res = await get(holder);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('CHAIN_UNAVAILABLE');
    } finally {
      await slow.close();
    }
  });

  it('an RPC of another chain is refused rather than trusted for balances', async () => {
    const other = await startFakeJsonRpc({ chainId: 1 });
    other.setTokenBalance(TOKEN, holder, MIN * 2n);
    try {
      gate(other.url);
      const res = await post({ fid: '1', address: holder });
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('CHAIN_MISMATCH');
      expect(other.calls).not.toContain('eth_call');
    } finally {
      await other.close();
    }
  });
});

describe('token gating is rate limited per client address', () => {
  it('each check costs a chain RPC call, so one address gets 429 past its window', async () => {
    gate();
    reloadConfig({ RATE_LIMITS: JSON.stringify({ chainRead: { limit: 2, windowSeconds: 600 } }) });
    const ip = uniqueIp();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('GET', `/api/auth/token-gating/verify?address=${holder}`, { ip })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await call('GET', `/api/auth/token-gating/verify?address=${holder}`, { ip: uniqueIp() })).status).toBe(200);
  });
});
