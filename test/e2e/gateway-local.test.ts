import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient, defineChain, http, parseUnits, serializeTransaction, type Hex } from 'viem';
import { Challenge, Receipt } from 'mppx';
import { Mppx, tempo } from 'mppx/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswerTo, startFakeModelServer, type FakeModelServer } from '../helpers/fake-model-server';
import { startLocalChain, type LocalChain } from '../helpers/local-chain';
import { startLocalStack, stopLocalStack, type LocalStack } from '../helpers/local-stack';

/**
 * The gateway end to end over `npm start` (one stack): MPP_RPC_URL points at a local chain with a
 * TIP-20-like token and MPP_RECIPIENT is set; the model provider is a fake on loopback; CARD_MODE=local.
 * An unauthenticated call gets the 402 challenge, paying it on the chain and retrying gets the answer
 * and a Payment-Receipt, a replay gets 402; the MPP SDK's own client (mppx, unmodified) pays it in
 * push mode from a JSON-RPC wallet account; a subscriber (local card checkout) gets the same plugin by
 * card; a caller without an account buys one call on the local card page and spends its receipt once.
 */
const PATH_USD: Hex = '0x20c0000000000000000000000000000000000000';

describe('the v1 gateway on npm start', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-gateway-e2e-'));
  const payer = privateKeyToAccount(generatePrivateKey());
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  let chain: LocalChain;
  let model: FakeModelServer;
  let stack: LocalStack;
  let base: string;

  const gateway = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/api/v1/gateway`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  /** Opens a local checkout page and pays it, as a browser would; answers where the payer lands. */
  const payOnLocalCardPage = async (checkoutUrl: string) => {
    expect(checkoutUrl).toMatch(new RegExp(`^${base}/local-card/checkout/cs_local_[0-9a-f]+$`));
    expect((await fetch(checkoutUrl)).status).toBe(200);
    const paid = await fetch(checkoutUrl, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    return paid.headers.get('location')!;
  };

  beforeAll(async () => {
    chain = await startLocalChain({ chainId: 4217 });
    await chain.deployToken(PATH_USD);
    await chain.mint(PATH_USD, payer.address, 1_000_000_000n);
    model = await startFakeModelServer();
    stack = startLocalStack({
      DATA_DIR: dataDir,
      CARD_MODE: 'local',
      MODEL_API_BASE_URL: model.baseUrl,
      MODEL_API_KEY: 'sk-e2e-provider-key',
      MPP_RPC_URL: chain.url,
      MPP_RECIPIENT: recipient,
      MPP_CHAIN_ID: '4217',
      MPP_CURRENCY: PATH_USD,
    });
    base = await stack.ready;
  }, 90_000);

  afterAll(async () => {
    await stopLocalStack(stack, dataDir);
    await Promise.all([chain?.close(), model?.close()]);
  });

  it('402 without payment; paid on the local chain, the retry is answered with a Payment-Receipt; the replay is 402', async () => {
    const challenged = await gateway({ prompt: 'first paid call' });
    expect(challenged.status).toBe(402);
    expect(challenged.body).toMatchObject({ error: 'payment_required', mpp: { scheme: 'tempo', amount: '0.01', nonce: expect.any(String) } });
    expect(challenged.headers.get('www-authenticate')).toMatch(
      new RegExp(`^Payment amount=0\\.01, currency=${challenged.body.mpp.currency}, recipient=${challenged.body.mpp.recipient}, id="`),
    );
    expect(challenged.body.mpp.recipient.toLowerCase()).toBe(recipient.toLowerCase());

    const hash = await chain.transferWithMemo(
      payer,
      PATH_USD,
      recipient.toLowerCase() as Hex,
      parseUnits(challenged.body.mpp.amount, 6),
      challenged.body.mpp.memo,
    );
    const credential = { authorization: `Payment ${JSON.stringify({ scheme: 'tempo', transaction: hash, challengeNonce: challenged.body.mpp.nonce })}` };
    const served = await gateway({ prompt: 'first paid call' }, credential);
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ plugin: 'generate-text', message: fakeAnswerTo('first paid call'), payment: { method: 'mpp', receipt: hash } });
    const receipt = JSON.parse(Buffer.from(served.headers.get('payment-receipt')!, 'base64url').toString());
    expect(receipt).toMatchObject({ status: 'success', method: 'tempo', reference: hash });

    const replay = await gateway({ prompt: 'first paid call' }, credential);
    expect(replay.status).toBe(402);
    expect(replay.body.code).toBe('ALREADY_USED');
  });

  it('mppx pays it unmodified: its Challenge parser reads our 402, it pushes a bound payment from a JSON-RPC wallet, we answer 200 and its Receipt parser reads ours', async () => {
    // A wallet node holds the key; the client only names the address (viem's json-rpc account).
    const wallet = privateKeyToAccount(generatePrivateKey());
    chain.unlock(wallet);
    await chain.mint(PATH_USD, wallet.address, 1_000_000n);
    const localChain = defineChain({
      id: 4217,
      name: 'local test chain',
      nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 6 },
      rpcUrls: { default: { http: [chain.url] } },
      // A plain EVM chain: mppx keeps the client's own serializer instead of Tempo's.
      serializers: { transaction: serializeTransaction },
    });
    const walletClient = createClient({ chain: localChain, transport: http(chain.url), account: wallet.address });
    const url = `${base}/api/v1/gateway`;
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'paid by mppx' }) };

    const unpaid = await fetch(url, init);
    const body = (await unpaid.clone().json()) as any;
    const parsed = Challenge.fromResponse(unpaid);
    expect(parsed).toMatchObject({ id: body.mpp.nonce, method: 'tempo', intent: 'charge', expires: new Date(body.mpp.expiresAt).toISOString() });
    expect(parsed.request).toEqual({
      amount: '10000',
      currency: body.mpp.currency,
      recipient: body.mpp.recipient,
      methodDetails: { chainId: 4217, memo: body.mpp.memo, supportedModes: ['push'] },
    });

    const before = await chain.balanceOf(PATH_USD, recipient);
    const mppx = Mppx.create({ polyfill: false, methods: [tempo.charge({ account: wallet.address, getClient: () => walletClient })] });
    const paid = await mppx.fetch(url, init);
    const served = (await paid.json()) as any;
    expect(paid.status).toBe(200);
    expect(served).toMatchObject({ plugin: 'generate-text', message: fakeAnswerTo('paid by mppx'), payment: { method: 'mpp' } });
    const receipt = Receipt.fromResponse(paid);
    expect(receipt).toMatchObject({ status: 'success', method: 'tempo', reference: served.payment.receipt });
    expect(await chain.balanceOf(PATH_USD, recipient)).toBe(before + 10_000n);
    expect(await chain.balanceOf(PATH_USD, wallet.address)).toBe(1_000_000n - 10_000n);
  });

  it('a subscriber who paid on the local card checkout gets the same plugin by card', async () => {
    const credentials = { email: 'gateway-subscriber@example.com', password: 'correct-horse-battery' };
    expect(
      (await fetch(`${base}/api/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })).status,
    ).toBeLessThan(300);
    const signIn = await fetch(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    const token = /(?:^|,\s*)session=([^;]+)/.exec(signIn.headers.getSetCookie().join(', '))![1]!;
    const session = { authorization: `Bearer ${token}` };
    expect((await gateway({ prompt: 'by card' }, session)).body.code).toBe('SUBSCRIPTION_REQUIRED');

    const checkout = await fetch(`${base}/api/v1/payments/card/create?plugin=generate-text&plan=solo`, { headers: session, redirect: 'manual' });
    expect(checkout.status).toBe(303);
    await payOnLocalCardPage(checkout.headers.get('location')!);

    const byCard = await gateway({ prompt: 'by card' }, session);
    expect(byCard.status).toBe(200);
    expect(byCard.body).toMatchObject({ message: fakeAnswerTo('by card'), payment: { method: 'card', receipt: null } });
  });

  it('without an account: one call bought on the local card page, its receipt spent once', async () => {
    const challenged = await gateway({ plugin: 'generate-text', prompt: 'one card call' });
    expect(challenged.body.card).toEqual({ checkoutUrl: '/api/v1/payments/card/create?plugin=generate-text', amount: 0.3, currency: 'gbp' });
    const checkout = await fetch(`${base}${challenged.body.card.checkoutUrl}`, { redirect: 'manual' });
    expect(checkout.status).toBe(303);
    const page = await fetch(checkout.headers.get('location')!);
    expect(await page.text()).toContain('one generate-text gateway call at 0.30 GBP');
    const landing = await payOnLocalCardPage(checkout.headers.get('location')!);
    expect(landing).toMatch(new RegExp(`^${base}/gateway/receipt\\?plugin=generate-text&checkout=success#receipt=gwr_`));
    expect((await fetch(landing)).status).toBe(200);
    const token = new URLSearchParams(new URL(landing).hash.slice(1)).get('receipt')!;

    const served = await gateway({ prompt: 'one card call' }, { authorization: `Bearer ${token}` });
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ message: fakeAnswerTo('one card call'), payment: { method: 'card', receipt: null } });
    const replay = await gateway({ prompt: 'one card call' }, { authorization: `Bearer ${token}` });
    expect(replay.status).toBe(402);
    expect(replay.body.code).toBe('ALREADY_USED');
  });
});
