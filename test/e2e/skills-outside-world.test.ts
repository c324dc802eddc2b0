import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalChain, type LocalChain } from '../helpers/local-chain';
import { type LocalStack, signUpVerified, startLocalStack, stopLocalStack, until } from '../helpers/local-stack';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

const TOKEN = '0x00000000000000000000000000000000000c0ffe' as Hex;
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000));
const recipient = () => privateKeyToAccount(generatePrivateKey()).address;

/** A loopback HTTP server answering every request with `answer`, each request kept. */
async function loopback(answer: (n: number) => { status: number; type?: string; body?: string }) {
  const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const out = answer(received.length);
      res.writeHead(out.status, out.type ? { 'content-type': out.type } : {});
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { host, url: `http://${host}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * The skills that reach the outside world, end to end over `npm start` with one stack: a subscriber (the local card checkout)
 * with a custodial wallet on a local chain pays a stablecoin amount, creates and executes a split,
 * creates and releases an escrow once, sends an email to the outbox, fetches a loopback page with
 * the browser skill and sees a webhook delivery signed and retried (the receiver fails once).
 */
describe('skills that act on the outside world, over npm start', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-outside-e2e-'));
  let chain: LocalChain;
  let page: Awaited<ReturnType<typeof loopback>>;
  let receiver: Awaited<ReturnType<typeof loopback>>;
  let stack: LocalStack;
  let base: string;
  let user: { userId: string; token: string };
  let wallet: Hex;

  const api = async (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${pathname}`, {
      method,
      redirect: 'manual',
      headers: { authorization: `Bearer ${user.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  const skill = async (name: string, body: Record<string, unknown>, headers?: Record<string, string>) => {
    const res = await api('POST', `/api/skills/${name}`, body, headers);
    expect(res.status, `${name} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    chain = await startLocalChain({ chainId: 84532 });
    await chain.deployToken(TOKEN);
    page = await loopback(() => ({
      status: 200,
      type: 'text/html; charset=utf-8',
      body: '<html><head><title>Tour dates</title></head><body><h1>Autumn tour</h1><p>Leeds, 12 July.</p><a href="/tickets">Tickets</a></body></html>',
    }));
    // The first delivery fails, every later one is taken.
    receiver = await loopback((n) => ({ status: n === 1 ? 500 : 200 }));
    stack = startLocalStack({
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      CARD_MODE: 'local',
      WALLET_RPC_URL: chain.url,
      PAYMENT_TOKEN: `USDC:${TOKEN}:6`,
      FETCH_ALLOWED_LOOPBACK: `${page.host},${receiver.host}`,
    });
    base = await stack.ready;
    user = await signUpVerified(base, dataDir, 'outside-world@example.com');
    const checkout = await api('GET', '/api/card/checkout?plan=solo');
    expect((await fetch(checkout.headers.get('location')!, { method: 'POST', redirect: 'manual' })).status).toBe(303);
    await until(async () => ((await api('GET', '/api/billing')).body.active === true ? true : undefined), 'the plan to be active');
    const created = await api('POST', '/api/wallet', { action: 'create' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    wallet = created.body.address;
    await chain.mint(TOKEN, wallet, USDC(1000));
    expect((await skill('usdc-payments', { action: 'set_daily_limit', amount: '500' })).dailyLimit).toBe('500.000000');
  }, 180_000);

  afterAll(async () => {
    await stopLocalStack(stack, dataDir);
    await Promise.all([chain?.close(), page?.close(), receiver?.close()]);
  });

  it('pays a stablecoin amount once, also when the call is retried with its Idempotency-Key', async () => {
    const to = recipient();
    const key = { 'idempotency-key': randomUUID() };
    const paid = await skill('usdc-payments', { action: 'send', to, amount: '12.5', memo: 'deposit' }, key);
    const again = await api('POST', '/api/skills/usdc-payments', { action: 'send', to, amount: '12.5', memo: 'deposit' }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.transfer.hash).toBe(paid.transfer.hash);
    const status = await until(async () => {
      const s = await skill('usdc-payments', { action: 'status', hash: paid.transfer.hash });
      return s.transfer.status === 'confirmed' ? s : undefined;
    }, 'the transfer to confirm');
    expect(status.transfer).toMatchObject({ from: wallet, to, amount: '12.5', status: 'confirmed' });
    expect(await chain.balanceOf(TOKEN, to)).toBe(USDC(12.5));
    expect(await chain.balanceOf(TOKEN, wallet)).toBe(USDC(987.5));
  });

  it('creates and executes a split: each recipient paid its share once', async () => {
    const [a, b] = [recipient(), recipient()];
    const { rule } = await skill('instant-split', {
      action: 'create_split_rule',
      splits: [
        { recipientAddress: a, percentage: 70, role: 'artist' },
        { recipientAddress: b, percentage: 30, role: 'producer' },
      ],
    });
    const executed = await skill('instant-split', { action: 'execute_split', splitId: rule.splitId, amount: '100' });
    expect(executed.legs.map((l: { amount: string; status: string }) => [l.amount, l.status])).toEqual([
      ['70', 'confirmed'],
      ['30', 'confirmed'],
    ]);
    expect([await chain.balanceOf(TOKEN, a), await chain.balanceOf(TOKEN, b)]).toEqual([USDC(70), USDC(30)]);
    expect(await chain.balanceOf(TOKEN, wallet)).toBe(USDC(887.5));
  });

  it('creates an escrow and releases it once', async () => {
    await skill('booking-settlement', { action: 'create_escrow', bookingId: 'leeds-12-july', booking: { guarantee: 1500, backend: 70, deposit: 500 } });
    const released = await skill('booking-settlement', { action: 'release_funds', bookingId: 'leeds-12-july', netRevenue: 4000 });
    expect(released.booking).toMatchObject({ status: 'released', settlement: { artistPayout: '2800.000000' } });
    const twice = await api('POST', '/api/skills/booking-settlement', { action: 'release_funds', bookingId: 'leeds-12-july' });
    expect([twice.status, twice.body.code]).toEqual([409, 'ALREADY_RELEASED']);
  });

  it('sends an email to the outbox', async () => {
    const to = `promoter-${randomUUID().slice(0, 8)}@example.com`;
    const sent = await skill('email', { action: 'send', to, subject: 'Hold for 12 July', body: 'Can we confirm the hold?' });
    expect(sent.sent).toBe(1);
    const outbox = path.join(dataDir, 'outbox');
    const mail = readdirSync(outbox)
      .filter((n) => n.endsWith('.json'))
      .map((n) => JSON.parse(readFileSync(path.join(outbox, n), 'utf8')) as { to: string; subject: string; text: string })
      .find((m) => m.to === to);
    expect(mail).toMatchObject({ subject: 'Hold for 12 July', text: 'Can we confirm the hold?' });
  });

  it('fetches a page with the browser skill: its text and links', async () => {
    const fetched = await skill('browser', { action: 'fetch', url: `${page.url}/tour` });
    expect(fetched).toMatchObject({ status: 200, title: 'Tour dates' });
    expect(fetched.text).toContain('Leeds, 12 July.');
    expect(JSON.stringify(fetched.links)).toContain(`${page.url}/tickets`);
  });

  it('sends a webhook: signed, refused once by the receiver, retried with the same id, then taken', async () => {
    const { endpoint, secret } = await skill('webhook', { action: 'register', url: `${receiver.url}/hooks` });
    await skill('webhook', { action: 'send', endpointId: endpoint.endpointId, type: 'show.announced', payload: { city: 'Leeds' } });
    await until(async () => (receiver.received.length >= 2 ? true : undefined), 'the retried delivery', 60_000);
    const [first, second] = receiver.received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const verified = new Webhook(secret).verify(second!.body, {
      'webhook-id': String(second!.headers['webhook-id']),
      'webhook-timestamp': String(second!.headers['webhook-timestamp']),
      'webhook-signature': String(second!.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({ type: 'show.announced', data: { city: 'Leeds' } });
    // A forged signature is what a receiver refuses.
    expect(() => new Webhook(secret).verify(second!.body, { ...second!.headers, 'webhook-signature': 'v1,AAAA' } as Record<string, string>)).toThrow();
    // The summary counts what moved and what was sent.
    const summary = await api('GET', `/api/metrics/${user.userId}/summary`);
    expect(summary.body.moneyMoved).toMatchObject({ transfers: 1, splitPayments: 2, escrowReleases: 1 });
    expect(summary.body.messagesSent).toMatchObject({ emails: 1, webhookMessages: 1 });
  });
});
