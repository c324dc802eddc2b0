import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { concat, encodeAbiParameters, encodeFunctionData, getContractAddress, parseAbi, serializeErc6492Signature, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage, type SiweMessage } from 'viem/siwe';
import { walletEmail } from '#functions/http/wallet-sign-in/operations';
import { authenticate } from '#domain/auth/authenticate';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { createUser, findUserIdByEmail, findUserIdByLogin, getUser } from '#data/users';
import { call, uniqueIp, type CallResult } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { refusedUrl, startEvmJsonRpc, startFakeJsonRpc, type EvmJsonRpc } from '../helpers/fake-json-rpc';

const APP = 'http://127.0.0.1:3000';
const newAccount = () => privateKeyToAccount(generatePrivateKey());

let events: Awaited<ReturnType<typeof captureEvents>>;
beforeEach(async () => {
  events = await captureEvents();
});
afterEach(async () => {
  await events.stop();
  reloadConfig({ CHAIN_RPC_URL: undefined, CHAIN_RPC_TIMEOUT_MS: undefined });
});

async function nonce(): Promise<string> {
  const res = await call('GET', '/api/auth/nonce', { ip: uniqueIp() });
  expect(res.status).toBe(200);
  return res.body.nonce;
}

/** A message as a wallet would build it for this deployment; `over` breaks one thing at a time. */
async function message(signer: { address: Hex }, over: Partial<SiweMessage> = {}): Promise<string> {
  return createSiweMessage({
    address: signer.address,
    chainId: 8453,
    domain: '127.0.0.1:3000',
    uri: `${APP}/signin`,
    version: '1',
    statement: 'Sign in to the agent platform.',
    nonce: over.nonce ?? (await nonce()),
    issuedAt: new Date(),
    ...over,
  });
}

const submit = (body: unknown, opts: { accept?: string; query?: string } = {}): Promise<CallResult> =>
  call('POST', `/api/auth/callback/wallet${opts.query ?? ''}`, { body, headers: opts.accept ? { accept: opts.accept } : {}, ip: uniqueIp() });

const cookieValue = (cookies: string[], name: string) =>
  cookies
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1)
    .split(';')[0];

async function signedIn(res: CallResult) {
  const token = cookieValue(res.cookies, 'session');
  expect(token, 'session cookie').toBeTruthy();
  return (await authenticate(undefined, decodeURIComponent(token!)))!;
}

function expectRejected(res: CallResult, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 401, code });
  expect(typeof res.body.error).toBe('string');
  expect(cookieValue(res.cookies, 'session')).toBeUndefined();
}

/** Flips one bit in the middle of the signature's `s`. */
const tamper = (sig: Hex): Hex => {
  const i = 2 + 80;
  const flipped = (parseInt(sig[i]!, 16) ^ 1).toString(16);
  return `${sig.slice(0, i)}${flipped}${sig.slice(i + 1)}` as Hex;
};

describe('GET /api/auth/nonce', () => {
  it('issues an alphanumeric single-use nonce stored with a 10-minute expiry', async () => {
    const res = await call('GET', '/api/auth/nonce', { ip: uniqueIp() });
    expect(res.status).toBe(200);
    expect(res.body.nonce).toMatch(/^[A-Za-z0-9]{8,64}$/);
    const expires = Date.parse(res.body.expiresAt);
    expect(expires - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(10 * 60_000 + 1000);
    const stored = await getGlobal<{ expiresAt: number }>(keys.nonce(res.body.nonce), true);
    expect(stored?.expiresAt).toBe(Math.floor(expires / 1000));
    expect((await call('GET', '/api/auth/nonce', { ip: uniqueIp() })).body.nonce).not.toBe(res.body.nonce);
  });
});

describe('POST /api/auth/callback/wallet: sign-in', () => {
  it('a new wallet gets an account with the wallet-derived email, the session cookie and a 302 to the callback URL', async () => {
    const wallet = newAccount();
    const msg = await message(wallet);
    const res = await submit({ message: msg, signature: await wallet.signMessage({ message: msg }) }, { query: '?callbackUrl=%2Fdashboard' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${APP}/dashboard`);
    const auth = await signedIn(res);
    expect(auth.email).toBe(walletEmail(wallet.address));
    expect(await findUserIdByLogin('wallet', wallet.address)).toBe(auth.userId);
    expect((await getUser(auth.userId))!.walletAddress).toBe(wallet.address.toLowerCase());
    const created = (await events.drain()).filter((e) => e.type === 'user.created');
    expect(created.map((e) => e.data)).toEqual([expect.objectContaining({ userId: auth.userId, method: 'wallet' })]);
  });

  it('answers 200 {user} with Accept: application/json, and the same wallet signs in to the same account', async () => {
    const wallet = newAccount();
    const first = await message(wallet);
    const a = await submit({ message: first, signature: await wallet.signMessage({ message: first }) }, { accept: 'application/json' });
    expect(a.status).toBe(200);
    expect(a.body.user).toMatchObject({ email: walletEmail(wallet.address), plan: 'none', credits: 0, id: expect.any(String) });
    const second = await message(wallet);
    const b = await submit({ message: second, signature: await wallet.signMessage({ message: second }) });
    expect(b.status).toBe(302);
    expect(b.headers.location).toBe(`${APP}/`);
    expect((await signedIn(b)).userId).toBe(a.body.user.id);
    expect((await events.drain()).filter((e) => e.type === 'user.created')).toHaveLength(1);
  });

  it('links the wallet to an account that already exists for the wallet-derived email', async () => {
    const wallet = newAccount();
    const existing = await createUser({ email: walletEmail(wallet.address), name: 'Already here' });
    const msg = await message(wallet);
    const res = await submit({ message: msg, signature: await wallet.signMessage({ message: msg }) });
    expect(res.status).toBe(302);
    expect((await signedIn(res)).userId).toBe(existing.userId);
    expect(await findUserIdByLogin('wallet', wallet.address)).toBe(existing.userId);
    expect((await getUser(existing.userId))!.walletAddress).toBe(wallet.address.toLowerCase());
    expect((await events.drain()).filter((e) => e.type === 'user.created')).toHaveLength(0);
  });

  it('concurrent first sign-ins of one new wallet (each with its own nonce) end in exactly one account', async () => {
    const wallet = newAccount();
    const bodies = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const msg = await message(wallet);
        return { message: msg, signature: await wallet.signMessage({ message: msg }) };
      }),
    );
    const results = await Promise.all(bodies.map((b) => submit(b)));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(302));
    const userIds = new Set(await Promise.all(results.map(async (r) => (await signedIn(r)).userId)));
    expect(userIds.size).toBe(1);
    expect((await events.drain()).filter((e) => e.type === 'user.created')).toHaveLength(1);
  });

  it('50 parallel submissions of one valid message give exactly one session; the rest 401', async () => {
    const wallet = newAccount();
    const msg = await message(wallet);
    const signature = await wallet.signMessage({ message: msg });
    const results = await Promise.all(Array.from({ length: 50 }, () => submit({ message: msg, signature })));
    const ok = results.filter((r) => r.status === 302);
    const refused = results.filter((r) => r.status === 401);
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const r of refused) expect(r.body.code).toBe('NONCE_INVALID');
    expect(results.filter((r) => cookieValue(r.cookies, 'session'))).toHaveLength(1);
    expect(await findUserIdByEmail(walletEmail(wallet.address))).toBe((await signedIn(ok[0]!)).userId);
  });
});

describe('POST /api/auth/callback/wallet: every rejection is a 401', () => {
  const wallet = newAccount();

  it('missing or malformed message or signature', async () => {
    const msg = await message(wallet);
    const sig = await wallet.signMessage({ message: msg });
    expectRejected(await submit({ signature: sig }), 'SIWE_INVALID');
    expectRejected(await submit({ message: msg }), 'SIWE_INVALID');
    expectRejected(await submit({}), 'SIWE_INVALID');
    expectRejected(await submit({ message: msg, signature: sig.slice(2) }), 'SIWE_INVALID');
    expectRejected(await submit({ message: msg, signature: sig, extra: 1 }), 'SIWE_INVALID');
    expectRejected(await submit({ message: 'not a SIWE message', signature: sig }), 'SIWE_INVALID');
  });

  it.each([
    ['wrong domain', { domain: 'evil.example' }],
    ['wrong domain port', { domain: '127.0.0.1:4000' }],
    ['wrong URI', { uri: 'https://evil.example/signin' }],
    ['wrong chain', { chainId: 1 }],
    ['expired', { expirationTime: new Date(Date.now() - 1000) }],
    ['not valid yet (notBefore in the future)', { notBefore: new Date(Date.now() + 10 * 60_000) }],
    ['issued in the future', { issuedAt: new Date(Date.now() + 10 * 60_000) }],
  ] as const)('%s', async (_label, over) => {
    const msg = await message(wallet, over as Partial<SiweMessage>);
    expectRejected(await submit({ message: msg, signature: await wallet.signMessage({ message: msg }) }), 'SIWE_INVALID');
  });

  it('a nonce that was never issued', async () => {
    const msg = await message(wallet, { nonce: randomBytes(16).toString('hex') });
    expectRejected(await submit({ message: msg, signature: await wallet.signMessage({ message: msg }) }), 'NONCE_INVALID');
  });

  it('a reused nonce: the same signed message a second time', async () => {
    const msg = await message(wallet);
    const body = { message: msg, signature: await wallet.signMessage({ message: msg }) };
    expect((await submit(body)).status).toBe(302);
    expectRejected(await submit(body), 'NONCE_INVALID');
  });

  it('a tampered signature, which also uses up the nonce', async () => {
    const msg = await message(wallet);
    const sig = await wallet.signMessage({ message: msg });
    expectRejected(await submit({ message: msg, signature: tamper(sig) }), 'SIGNATURE_INVALID');
    expectRejected(await submit({ message: msg, signature: sig }), 'NONCE_INVALID');
  });

  it('a signature by another key', async () => {
    const msg = await message(wallet);
    expectRejected(await submit({ message: msg, signature: await newAccount().signMessage({ message: msg }) }), 'SIGNATURE_INVALID');
  });

  it('a message changed after signing', async () => {
    const msg = await message(wallet);
    const sig = await wallet.signMessage({ message: msg });
    expectRejected(
      await submit({ message: msg.replace('Sign in to the agent platform.', 'Sign in to the agent platform!'), signature: sig }),
      'SIGNATURE_INVALID',
    );
  });
});

describe('smart-wallet (ERC-1271 / ERC-6492) signatures go to the chain', () => {
  const owner = newAccount();
  const smartWallet = privateKeyToAccount(generatePrivateKey()).address;

  /** An ERC-6492 signature of a not-yet-deployed wallet: factory, its calldata, and the owner's signature. */
  async function smartWalletSubmission() {
    const msg = await message({ address: smartWallet });
    const inner = await owner.signMessage({ message: msg });
    const signature = serializeErc6492Signature({ address: newAccount().address, data: '0xdeadbeef', signature: inner });
    return { message: msg, signature };
  }

  it('without a configured chain RPC: 503 CHAIN_UNAVAILABLE (a plain EOA signature still verifies locally)', async () => {
    const res = await submit(await smartWalletSubmission());
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CHAIN_UNAVAILABLE');
  });

  it('RPC refusing connections: 503 CHAIN_UNAVAILABLE, never a 500', async () => {
    reloadConfig({ CHAIN_RPC_URL: await refusedUrl() });
    const res = await submit(await smartWalletSubmission());
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('CHAIN_UNAVAILABLE');
  });

  it('RPC that never answers: 503 once the bounded timeout passes', async () => {
    const rpc = await startFakeJsonRpc();
    rpc.mode = 'hang';
    reloadConfig({ CHAIN_RPC_URL: rpc.url, CHAIN_RPC_TIMEOUT_MS: '300' });
    try {
      const res = await submit(await smartWalletSubmission());
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('CHAIN_UNAVAILABLE');
    } finally {
      await rpc.close();
    }
  });

  it('an EOA signature never needs the chain, even with the RPC down', async () => {
    reloadConfig({ CHAIN_RPC_URL: await refusedUrl() });
    const wallet = newAccount();
    const msg = await message(wallet);
    expect((await submit({ message: msg, signature: await wallet.signMessage({ message: msg }) })).status).toBe(302);
  });
});

/*
 * A minimal counterfactual smart wallet, compiled with solc 0.8.28 (optimizer on, 200 runs, evmVersion cancun):
 *
 *   contract OwnedWallet {
 *     address public immutable owner;
 *     constructor(address o) { owner = o; }
 *     function isValidSignature(bytes32 hash, bytes calldata sig) external view returns (bytes4) {
 *       if (sig.length != 65) return 0xffffffff;
 *       bytes32 r = bytes32(sig[0:32]); bytes32 s = bytes32(sig[32:64]); uint8 v = uint8(sig[64]);
 *       return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
 *     }
 *   }
 *   contract WalletFactory {
 *     function deploy(address o, bytes32 salt) external returns (address) { return address(new OwnedWallet{salt: salt}(o)); }
 *   }
 */
const WALLET_INIT: Hex =
  '0x60a0604052348015600e575f5ffd5b5060405161034e38038061034e833981016040819052602b91603b565b6001600160a01b03166080526066565b5f60208284031215604a575f5ffd5b81516001600160a01b0381168114605f575f5ffd5b9392505050565b6080516102ca6100845f395f8181606e015261014101526102ca5ff3fe608060405234801561000f575f5ffd5b5060043610610034575f3560e01c80631626ba7e146100385780638da5cb5b14610069575b5f5ffd5b61004b6100463660046101c4565b6100a8565b6040516001600160e01b031990911681526020015b60405180910390f35b6100907f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610060565b5f604182146100c057506001600160e01b03196101bd565b5f6100ce602082858761023b565b6100d791610262565b90505f6100e860406020868861023b565b6100f191610262565b90505f8585604081811061010757610107610280565b604080515f8152602081018083528c9052939091013560f81c90830181905260608301869052608083018590529250506001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000169060019060a0016020604051602081039080840390855afa158015610188573d5f5f3e3d5ffd5b505050602060405103516001600160a01b0316146101ae576001600160e01b03196101b7565b630b135d3f60e11b5b93505050505b9392505050565b5f5f5f604084860312156101d6575f5ffd5b83359250602084013567ffffffffffffffff8111156101f3575f5ffd5b8401601f81018613610203575f5ffd5b803567ffffffffffffffff811115610219575f5ffd5b86602082840101111561022a575f5ffd5b939660209190910195509293505050565b5f5f85851115610249575f5ffd5b83861115610255575f5ffd5b5050820193919092039150565b8035602083101561027a575f19602084900360031b1b165b92915050565b634e487b7160e01b5f52603260045260245ffdfea2646970667358221220d9a4341eb6ceb04744fab403a94b9a60c0fa87118ef06da82c5d9d1be0f26d5c64736f6c634300081c0033';
const FACTORY_RUNTIME: Hex =
  '0x6080604052348015600e575f5ffd5b50600436106026575f3560e01c806332c02a1414602a575b5f5ffd5b6039603536600460a3565b6055565b6040516001600160a01b03909116815260200160405180910390f35b5f81836040516062906096565b6001600160a01b0390911681526020018190604051809103905ff5905080158015608e573d5f5f3e3d5ffd5b509392505050565b61034e806100d783390190565b5f5f6040838503121560b3575f5ffd5b82356001600160a01b038116811460c8575f5ffd5b94602093909301359350505056fe60a0604052348015600e575f5ffd5b5060405161034e38038061034e833981016040819052602b91603b565b6001600160a01b03166080526066565b5f60208284031215604a575f5ffd5b81516001600160a01b0381168114605f575f5ffd5b9392505050565b6080516102ca6100845f395f8181606e015261014101526102ca5ff3fe608060405234801561000f575f5ffd5b5060043610610034575f3560e01c80631626ba7e146100385780638da5cb5b14610069575b5f5ffd5b61004b6100463660046101c4565b6100a8565b6040516001600160e01b031990911681526020015b60405180910390f35b6100907f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610060565b5f604182146100c057506001600160e01b03196101bd565b5f6100ce602082858761023b565b6100d791610262565b90505f6100e860406020868861023b565b6100f191610262565b90505f8585604081811061010757610107610280565b604080515f8152602081018083528c9052939091013560f81c90830181905260608301869052608083018590529250506001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000169060019060a0016020604051602081039080840390855afa158015610188573d5f5f3e3d5ffd5b505050602060405103516001600160a01b0316146101ae576001600160e01b03196101b7565b630b135d3f60e11b5b93505050505b9392505050565b5f5f5f604084860312156101d6575f5ffd5b83359250602084013567ffffffffffffffff8111156101f3575f5ffd5b8401601f81018613610203575f5ffd5b803567ffffffffffffffff811115610219575f5ffd5b86602082840101111561022a575f5ffd5b939660209190910195509293505050565b5f5f85851115610249575f5ffd5b83861115610255575f5ffd5b5050820193919092039150565b8035602083101561027a575f19602084900360031b1b165b92915050565b634e487b7160e01b5f52603260045260245ffdfea2646970667358221220d9a4341eb6ceb04744fab403a94b9a60c0fa87118ef06da82c5d9d1be0f26d5c64736f6c634300081c0033a2646970667358221220c6740f8fb187b59957db1772fa186d628f72f8221217d1540f46dd3c051824c364736f6c634300081c0033';

const FACTORY: Hex = '0x000000000000000000000000000000000000fac7';
const factoryAbi = parseAbi(['function deploy(address o, bytes32 salt) returns (address)']);

describe('valid smart-wallet signatures, verified through the RPC by a real EVM', () => {
  let chain: EvmJsonRpc;
  beforeAll(async () => {
    chain = await startEvmJsonRpc();
    await chain.putCode(FACTORY, FACTORY_RUNTIME);
  });
  afterAll(() => chain.close());
  beforeEach(() => {
    reloadConfig({ CHAIN_RPC_URL: chain.url });
  });

  const salt = () => toHex(randomBytes(32));
  const walletOf = (owner: Hex, s: Hex) =>
    getContractAddress({ opcode: 'CREATE2', from: FACTORY, salt: s, bytecode: concat([WALLET_INIT, encodeAbiParameters([{ type: 'address' }], [owner])]) });
  const deployData = (owner: Hex, s: Hex) => encodeFunctionData({ abi: factoryAbi, functionName: 'deploy', args: [owner, s] });

  it("a wallet not yet deployed (ERC-6492): its owner's wrapped signature signs the wallet in", async () => {
    const owner = newAccount();
    const s = salt();
    const wallet = walletOf(owner.address, s);
    const msg = await message({ address: wallet });
    const signature = serializeErc6492Signature({ address: FACTORY, data: deployData(owner.address, s), signature: await owner.signMessage({ message: msg }) });
    const res = await submit({ message: msg, signature });
    expect(res.status).toBe(302);
    expect((await signedIn(res)).email).toBe(walletEmail(wallet));
    expect(chain.calls).toContain('eth_call');
  });

  it("a deployed wallet (ERC-1271): its owner's plain signature signs the wallet in", async () => {
    const owner = newAccount();
    const s = salt();
    await chain.transact(FACTORY, deployData(owner.address, s));
    const wallet = walletOf(owner.address, s);
    const msg = await message({ address: wallet });
    const res = await submit({ message: msg, signature: await owner.signMessage({ message: msg }) });
    expect(res.status).toBe(302);
    expect((await signedIn(res)).email).toBe(walletEmail(wallet));
  });

  it('a wrapped signature by someone other than the owner is a 401', async () => {
    const owner = newAccount();
    const s = salt();
    const msg = await message({ address: walletOf(owner.address, s) });
    const signature = serializeErc6492Signature({
      address: FACTORY,
      data: deployData(owner.address, s),
      signature: await newAccount().signMessage({ message: msg }),
    });
    expectRejected(await submit({ message: msg, signature }), 'SIGNATURE_INVALID');
  });

  it('a wrapped signature whose factory call fails (the validator reverts) is a 401, not a 503', async () => {
    const owner = newAccount();
    const msg = await message({ address: walletOf(owner.address, salt()) });
    const signature = serializeErc6492Signature({ address: FACTORY, data: '0xdeadbeef', signature: await owner.signMessage({ message: msg }) });
    expectRejected(await submit({ message: msg, signature }), 'SIGNATURE_INVALID');
  });
});
