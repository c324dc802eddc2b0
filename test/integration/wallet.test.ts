import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hexToBigInt, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { openWalletKey } from '#domain/wallets/keys';
import * as keys from '#data/keys';
import { getGlobal, tenant } from '#data/tenant';
import { getWalletKeyRecord } from '#data/wallets';
import { resetLogger } from '#http/logger';
import { call as apiCall, testSession, uniqueIp, type CallOptions, type TestSession } from '../helpers/api';
import { startFakeJsonRpc, type FakeJsonRpc } from '../helpers/fake-json-rpc';
import { captureWrites } from '../helpers/capture-writes';

/**
 * Wallets (spec 4.9) against DynamoDB Local and a JSON-RPC fake on loopback. Every response body and
 * every log line of this file is kept, and the last test scans them all for every private key the
 * file has seen (imported, or read back from storage), in every encoding a leak could take.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'wallet-test-'));
const responses: string[] = [];
const logLines: string[] = [];
const secrets: Hex[] = [];
let rpc: FakeJsonRpc;
let restoreWrites: () => void;

const call = async (method: string, pathAndQuery: string, opts: CallOptions = {}) => {
  const res = await apiCall(method, pathAndQuery, { ip: uniqueIp(), ...opts });
  responses.push(`${res.status} ${JSON.stringify(res.headers)} ${res.cookies.join(';')} ${res.text ?? ''}`);
  return res;
};

const BASE_CONFIG = {
  WALLET_RPC_TIMEOUT_MS: '400',
  HOSTED_WALLET_PROVIDER: undefined,
  HOSTED_WALLET_PROJECT_ID: undefined,
  KMS_KEY_ID: undefined,
  STAGE: 'test',
};

beforeAll(async () => {
  // The wallet reads the test network (l2-test, chain 84532).
  rpc = await startFakeJsonRpc({ chainId: 84532 });
  reloadConfig({ ...BASE_CONFIG, LOCAL_MASTER_KEY_FILE: path.join(dir, 'master.key'), WALLET_RPC_URL: rpc.url, LOG_LEVEL: 'DEBUG' });
  resetLogger();
  restoreWrites = captureWrites(logLines);
});

afterEach(() => {
  reloadConfig({ ...BASE_CONFIG, WALLET_RPC_URL: rpc.url });
  rpc.mode = 'ok';
});

afterAll(async () => {
  restoreWrites();
  reloadConfig({ ...BASE_CONFIG, LOCAL_MASTER_KEY_FILE: undefined, WALLET_RPC_URL: undefined, WALLET_RPC_TIMEOUT_MS: undefined, LOG_LEVEL: 'SILENT' });
  resetLogger();
  await rpc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads the stored key back (as a signer would) so the leak scan knows what to look for. */
async function rememberStoredKey(session: TestSession, expectedAddress: string) {
  const record = await getWalletKeyRecord(session.userId);
  expect(record).toBeDefined();
  const key = await openWalletKey(session.userId, record!);
  expect(privateKeyToAccount(key).address).toBe(expectedAddress);
  secrets.push(key);
}

const createWallet = (session: TestSession) => call('POST', '/api/wallet', { session, body: { action: 'create' } });

describe('POST /api/wallet', () => {
  it('create: stores an envelope-encrypted key, the address look-up, and answers {address, network, message}', async () => {
    const session = await testSession();
    const res = await createWallet(session);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['address', 'message', 'network']);
    expect(res.body.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(res.body.network).toBe('l2-test');

    const item = await tenant(session.userId).get<Record<string, any>>(keys.wallet(session.userId));
    expect(item).toMatchObject({ address: res.body.address, network: 'l2-test', custody: 'platform' });
    expect(item!.encryptedKey).toMatchObject({ v: 1, alg: 'A256GCM', keyProvider: 'local' });
    expect(await getGlobal(keys.walletAddress(res.body.address))).toMatchObject({ userId: session.userId });
    await rememberStoredKey(session, res.body.address);
    // The stored item holds no plaintext key in any field.
    const key = secrets.at(-1)!;
    expect(JSON.stringify(item)).not.toContain(key.slice(2));
  });

  it('create when a wallet exists: 400 wallet exists, and the first wallet is unchanged', async () => {
    const session = await testSession();
    const first = await createWallet(session);
    const second = await createWallet(session);
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ error: 'wallet exists', code: 'WALLET_EXISTS' });
    const seen = await call('POST', '/api/wallet', { session, body: { action: 'get_seed' } });
    expect(seen.body.address).toBe(first.body.address);
    await rememberStoredKey(session, first.body.address);
  });

  it('concurrent creates for one account give exactly one wallet', async () => {
    const session = await testSession();
    const results = await Promise.all(Array.from({ length: 8 }, () => createWallet(session)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.code).toBe('WALLET_EXISTS');
    const view = await call('GET', '/api/wallet', { session });
    expect(view.body.address).toBe(ok[0]!.body.address);
    await rememberStoredKey(session, ok[0]!.body.address);
  });

  it('get_seed: 404 without a wallet, then only {address, network, createdAt, warning}', async () => {
    const session = await testSession();
    const none = await call('POST', '/api/wallet', { session, body: { action: 'get_seed' } });
    expect(none.status).toBe(404);
    const created = await createWallet(session);
    const res = await call('POST', '/api/wallet', { session, body: { action: 'get_seed' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['address', 'createdAt', 'network', 'warning']);
    expect(res.body.address).toBe(created.body.address);
    expect(Number.isNaN(Date.parse(res.body.createdAt))).toBe(false);
    await rememberStoredKey(session, created.body.address);
  });

  it('export_seed: always 403 {error}, with or without a wallet', async () => {
    const session = await testSession();
    const before = await call('POST', '/api/wallet', { session, body: { action: 'export_seed' } });
    expect(before.status).toBe(403);
    expect(typeof before.body.error).toBe('string');
    const created = await createWallet(session);
    await rememberStoredKey(session, created.body.address);
    const after = await call('POST', '/api/wallet', { session, body: { action: 'export_seed' } });
    expect(after.status).toBe(403);
    expect(Object.keys(after.body).sort()).toEqual(['code', 'error']);
  });

  it('refuses an unknown action (400) and a request without a session (401)', async () => {
    const session = await testSession();
    expect((await call('POST', '/api/wallet', { session, body: { action: 'sign' } })).status).toBe(400);
    expect((await call('POST', '/api/wallet', { body: { action: 'create' } })).status).toBe(401);
  });
});

describe('GET /api/wallet', () => {
  it('without a wallet: {address: null, balance, network, hasWallet: false, message}', async () => {
    const session = await testSession();
    const res = await call('GET', '/api/wallet', { session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ address: null, balance: '0', network: 'l2-test', hasWallet: false, message: expect.any(String) });
  });

  it('with a wallet: the balance is read from the chain RPC (hex wei → ether string)', async () => {
    const session = await testSession();
    const created = await createWallet(session);
    await rememberStoredKey(session, created.body.address);
    rpc.setBalance(created.body.address, hexToBigInt('0x1121d33597384000')); // 1.2345 ether
    const res = await call('GET', '/api/wallet', { session });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ address: created.body.address, balance: '1.2345', network: 'l2-test', hasWallet: true, createdAt: expect.any(String) });
    const asked = rpc.requests.filter((c) => c.method === 'eth_getBalance').at(-1)!;
    expect(String(asked.params[0]).toLowerCase()).toBe(created.body.address.toLowerCase());

    rpc.setBalance(created.body.address, 0n);
    expect((await call('GET', '/api/wallet', { session })).body.balance).toBe('0');
  });

  it('answers balance "unavailable" (never a 500) when the RPC fails, hangs, refuses connections or is unset', async () => {
    const session = await testSession();
    const created = await createWallet(session);
    await rememberStoredKey(session, created.body.address);
    rpc.setBalance(created.body.address, 10n ** 18n);

    for (const mode of ['http-error', 'hang'] as const) {
      rpc.mode = mode;
      const res = await call('GET', '/api/wallet', { session });
      expect({ mode, status: res.status, balance: res.body.balance }).toEqual({ mode, status: 200, balance: 'unavailable' });
      expect(res.body.address).toBe(created.body.address);
    }
    rpc.mode = 'ok';

    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    reloadConfig({ WALLET_RPC_URL: `http://127.0.0.1:${closedPort}` });
    expect((await call('GET', '/api/wallet', { session })).body).toMatchObject({ balance: 'unavailable', hasWallet: true });

    reloadConfig({ WALLET_RPC_URL: undefined });
    expect((await call('GET', '/api/wallet', { session })).body).toMatchObject({ balance: 'unavailable', hasWallet: true });

    reloadConfig({ WALLET_RPC_URL: rpc.url });
    expect((await call('GET', '/api/wallet', { session })).body.balance).toBe('1');
  });

  it('without a session: 401 unless the hosted wallet is configured, then its description', async () => {
    const anonymous = await call('GET', '/api/wallet');
    expect(anonymous.status).toBe(401);
    reloadConfig({ HOSTED_WALLET_PROVIDER: 'local', HOSTED_WALLET_PROJECT_ID: 'proj-test-1' });
    const hosted = await call('GET', '/api/wallet');
    expect(hosted.status).toBe(200);
    expect(hosted.body).toEqual({
      agenticWallet: { status: 'configured', projectId: 'proj-test-1', features: expect.arrayContaining(['create_wallet', 'get_balance']) },
      instructions: expect.any(String),
    });
    // A session still sees its own wallet.
    const session = await testSession();
    expect((await call('GET', '/api/wallet', { session })).body.hasWallet).toBe(false);
  });
});

describe('GET /api/wallet/address', () => {
  it('answers the three shapes of the spec', async () => {
    const session = await testSession();
    expect((await call('GET', '/api/wallet/address', { session })).body).toEqual({ authenticated: true, address: null });
    const created = await createWallet(session);
    await rememberStoredKey(session, created.body.address);
    expect((await call('GET', '/api/wallet/address', { session })).body).toEqual({ authenticated: true, address: created.body.address });

    const anonymous = await call('GET', '/api/wallet/address');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({ authenticated: false, needsAuth: true, message: expect.any(String) });

    reloadConfig({ STAGE: 'aws' });
    const misconfigured = await call('GET', '/api/wallet/address');
    expect(misconfigured.body).toEqual({ authenticated: false, needsAuth: true, error: expect.any(String), setup: expect.stringContaining('KMS_KEY_ID') });
  });
});

describe('hosted wallet routes', () => {
  it('POST /api/wallet/create: 503 with setup when not configured; 403 for another email; 400 without email', async () => {
    const session = await testSession();
    const unconfigured = await call('POST', '/api/wallet/create', { session, body: { email: session.email } });
    expect(unconfigured.status).toBe(503);
    expect(unconfigured.body).toMatchObject({
      code: 'HOSTED_WALLET_NOT_CONFIGURED',
      error: expect.any(String),
      setup: expect.stringContaining('HOSTED_WALLET_PROVIDER'),
    });
    expect((await call('POST', '/api/wallet/create', { session, body: { email: 'someone-else@example.com' } })).status).toBe(403);
    expect((await call('POST', '/api/wallet/create', { session, body: {} })).status).toBe(400);
    expect((await call('POST', '/api/wallet/create', { body: { email: session.email } })).status).toBe(401);
  });

  it('POST /api/wallet/create with the local provider: a sealed wallet usable on both networks, once', async () => {
    reloadConfig({ HOSTED_WALLET_PROVIDER: 'local' });
    const session = await testSession();
    const res = await call('POST', '/api/wallet/create', { session, body: { email: session.email.toUpperCase() } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      walletAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      walletId: expect.any(String),
      networks: ['l2-test', 'l2-main'],
    });
    await rememberStoredKey(session, res.body.walletAddress);
    expect((await call('GET', '/api/wallet/address', { session })).body.address).toBe(res.body.walletAddress);
    const again = await call('POST', '/api/wallet/create', { session, body: { email: session.email } });
    expect(again.body.code).toBe('WALLET_EXISTS');
  });

  it('GET /api/wallet/hosted describes the EVM wallet (session required)', async () => {
    const session = await testSession();
    expect((await call('GET', '/api/wallet/hosted', { session })).body).toEqual({ status: 'ok', type: 'evm_wallet', supportedChains: ['l2-main', 'l2-test'] });
    expect((await call('GET', '/api/wallet/hosted')).status).toBe(401);
  });

  it('POST /api/wallet/hosted imports a given key (sealed, never returned) or generates one', async () => {
    const imported = generatePrivateKey();
    secrets.push(imported);
    const owner = await testSession();
    const res = await call('POST', '/api/wallet/hosted', { session: owner, body: { privateKey: imported } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, address: privateKeyToAccount(imported).address, network: 'l2-test' });
    await rememberStoredKey(owner, res.body.address);

    const other = await testSession();
    const taken = await call('POST', '/api/wallet/hosted', { session: other, body: { privateKey: imported } });
    expect(taken.status).toBe(409);
    expect((await call('POST', '/api/wallet/hosted', { session: owner, body: {} })).body.code).toBe('WALLET_EXISTS');

    const fresh = await testSession();
    const generated = await call('POST', '/api/wallet/hosted', { session: fresh, body: {} });
    expect(generated.status).toBe(200);
    await rememberStoredKey(fresh, generated.body.address);
  });

  it('POST /api/wallet/hosted refuses keys that are not secp256k1 keys without echoing them', async () => {
    const session = await testSession();
    // Above the curve order: valid hex, invalid key; viem's own error quotes it in decimal.
    const overOrder = `0x${'f'.repeat(64)}` as Hex;
    secrets.push(overOrder);
    const res = await call('POST', '/api/wallet/hosted', { session, body: { privateKey: overOrder } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_PRIVATE_KEY');
    const malformed = await call('POST', '/api/wallet/hosted', { session, body: { privateKey: `${overOrder}aa` } });
    expect(malformed.status).toBe(400);
    expect((await call('GET', '/api/wallet', { session })).body.hasWallet).toBe(false);
  });
});

describe('leak scan', () => {
  it('no response body, header or log line of this file carries any private key it handled, in any encoding', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(10);
    expect(responses.length).toBeGreaterThan(40);
    // The logger really was capturing: one access line per request.
    expect(logLines.filter((l) => l.includes('"message":"request"')).length).toBeGreaterThanOrEqual(responses.length);
    const haystack = [...responses, ...logLines].join('\n').toLowerCase();
    for (const key of secrets) {
      const hex = key.slice(2).toLowerCase();
      const raw = Buffer.from(hex, 'hex');
      for (const form of [
        key.toLowerCase(),
        hex,
        hex.slice(0, 32),
        hex.slice(32),
        raw.toString('base64').toLowerCase(),
        raw.toString('base64url').toLowerCase(),
        hexToBigInt(key).toString(),
      ]) {
        expect(haystack.includes(form), `a private key leaked (${form.length} chars)`).toBe(false);
      }
    }
  });
});
