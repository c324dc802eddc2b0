import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Hex } from 'viem';
import { verificationMessage } from '../../functions/agents/verify';
import type { Attestation } from '../../shared/adapters/eas';
import { reloadConfig } from '../../shared/config';
import { handler } from '../../functions/provisioner/handler';
import { call, accountSession, uniqueIp, type TestSession } from '../helpers/api';
import { startFakeJsonRpc } from '../helpers/fake-json-rpc';
import { drain, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

const EAS_CONTRACT = '0x4200000000000000000000000000000000000021';
const EAS_SCHEMA = `0x${'e5'.repeat(32)}` as Hex;

const bed = useAgentsTestBed();

async function agentOf(plan = 'solo', body: Record<string, unknown> = { name: 'Route bot' }) {
  const user = await accountSession();
  await subscribe(user.userId, plan);
  const res = await call('POST', '/api/agents/provision', { session: user, body, ip: uniqueIp() });
  expect(res.status).toBe(201);
  return { user, agentId: res.body.agent.id as string };
}

async function launch() {
  const messages = await drain(bed.queueUrl);
  expect((await handler(sqsEvent(...messages.map((m) => sqsRecord(m))))).batchItemFailures).toEqual([]);
}

const tokenOf = async (user: TestSession) => (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body.token as string;
const report = (user: TestSession, token: string, body: unknown) => call('POST', `/api/instance/${user.userId}/runtime/messages`, { bearer: token, body });

describe('agent configuration', () => {
  it('reads and replaces the validated configuration; unknown or invalid fields are refused', async () => {
    const { user, agentId } = await agentOf('solo', { name: 'x', config: { temperature: 0.5, skills: ['calendar'] } });
    expect((await call('GET', `/api/agents/${agentId}/config`, { session: user })).body).toEqual({ config: { temperature: 0.5, skills: ['calendar'] } });
    const next = { systemPrompt: 'Be brief.', maxTokens: 256, channels: { chatBot: true } };
    const put = await call('PUT', `/api/agents/${agentId}/config`, { session: user, body: next });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, config: next });
    expect((await call('GET', `/api/agents/${agentId}/config`, { session: user })).body).toEqual({ config: next });
    for (const bad of [{ temperature: 3 }, { skills: ['a', 'a'] }, { owner: 'me' }, { env: { 'BAD NAME': 'x' } }]) {
      expect((await call('PUT', `/api/agents/${agentId}/config`, { session: user, body: bad })).status).toBe(400);
    }
    expect((await call('GET', `/api/agents/${agentId}/config`, { session: user })).body).toEqual({ config: next });
  });

  it('delivers a new configuration to the running instance', async () => {
    const { user, agentId } = await agentOf();
    await launch();
    const put = await call('PUT', `/api/agents/${agentId}/config`, { session: user, body: { systemPrompt: 'You are Nova, the tour manager.' } });
    expect(put.status).toBe(200);
    const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
    const token = await tokenOf(user);
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${websocketUrl}?token=${token}`);
      ws.on('message', (d) => {
        if (JSON.parse(d.toString()).type === 'ready') return ws.send('hello');
        ws.close();
        resolve();
      });
      ws.once('error', reject);
    });
    expect(bed.model.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'You are Nova, the tour manager.' });
  });

  it("answers another user's agent with 404 on every agent route and changes nothing", async () => {
    const { user, agentId } = await agentOf();
    const intruder = await accountSession();
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/agents/${agentId}`],
      ['GET', `/api/agents/${agentId}/config`],
      ['PUT', `/api/agents/${agentId}/config`, { systemPrompt: 'pwned' }],
      ['GET', `/api/agents/${agentId}/messages`],
      ['GET', `/api/agents/${agentId}/stats`],
      ['GET', `/api/agents/${agentId}/verify`],
      [
        'POST',
        `/api/agents/${agentId}/verify`,
        { verificationType: 'eas', attestationUid: `0x${'ab'.repeat(32)}`, walletAddress: privateKeyToAccount(generatePrivateKey()).address },
      ],
      ['DELETE', `/api/agents/${agentId}/verify`],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(method, path, { session: intruder, body });
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 404 });
      expect(res.text).not.toContain(agentId);
    }
    expect((await call('GET', `/api/agents/${agentId}/config`, { session: user })).body).toEqual({ config: {} });
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);
  });
});

describe('agent messages and stats', () => {
  it('pages messages newest first with limit and offset; total counts them all; the limit is capped', async () => {
    const { user, agentId } = await agentOf();
    const token = await tokenOf(user);
    for (let i = 1; i <= 3; i += 1) {
      const res = await report(user, token, {
        agentId,
        messages: [
          { role: 'user', content: `q${i}` },
          { role: 'assistant', content: `a${i}` },
        ],
        responseMs: 100 * i,
      });
      expect(res.status).toBe(200);
    }
    const page = (await call('GET', `/api/agents/${agentId}/messages?limit=2&offset=1`, { session: user })).body;
    expect(page).toMatchObject({ total: 6, limit: 2, offset: 1, status: 'ok' });
    expect(page.messages.map((m: { content: string }) => m.content)).toEqual(['q3', 'a2']);
    const all = (await call('GET', `/api/agents/${agentId}/messages`, { session: user })).body;
    expect(all.limit).toBe(50);
    expect(all.messages).toHaveLength(6);
    expect((await call('GET', `/api/agents/${agentId}/messages?offset=10`, { session: user })).body.messages).toEqual([]);
    expect((await call('GET', `/api/agents/${agentId}/messages?limit=201`, { session: user })).status).toBe(400);
    expect((await call('GET', `/api/agents/${agentId}/messages?limit=0`, { session: user })).status).toBe(400);
  });

  it('without a reachable instance, stats are the labelled fallback built from stored figures (never random)', async () => {
    const { user, agentId } = await agentOf();
    const token = await tokenOf(user);
    const empty = (await call('GET', `/api/agents/${agentId}/stats`, { session: user })).body;
    expect(empty).toMatchObject({
      status: 'mock',
      stats: { agentId, messagesProcessed: 0, messagesPerHour: 0, averageResponseTime: 0, uptime: 0, successRate: '0.0000', errorRate: '0.0000' },
    });
    await report(user, token, {
      agentId,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
      responseMs: 300,
    });
    await report(user, token, {
      agentId,
      messages: [
        { role: 'user', content: 'c' },
        { role: 'assistant', content: 'd' },
      ],
      responseMs: 500,
    });
    await report(user, token, { agentId, messages: [{ role: 'user', content: 'e' }], failed: true });
    const first = (await call('GET', `/api/agents/${agentId}/stats`, { session: user })).body;
    const second = (await call('GET', `/api/agents/${agentId}/stats`, { session: user })).body;
    expect(first.status).toBe('mock');
    expect(first.stats).toMatchObject({ messagesProcessed: 3, averageResponseTime: 400, successRate: '0.6667', errorRate: '0.3333' });
    expect(first.stats.messagesPerHour).toBeGreaterThan(0);
    const { timestamp: _a, messagesPerHour: _b, ...stable1 } = first.stats;
    const { timestamp: _c, messagesPerHour: _d, ...stable2 } = second.stats;
    expect(stable2).toEqual(stable1);
  });

  it('with a running instance, stats are live figures of its process', async () => {
    const { user, agentId } = await agentOf();
    await launch();
    const res = (await call('GET', `/api/agents/${agentId}/stats`, { session: user })).body;
    expect(res.status).toBe('ok');
    expect(res.stats).toMatchObject({ agentId, status: 'running', messagesProcessed: 'N/A', successRate: 'N/A', errorRate: 'N/A' });
    expect(res.stats.memoryPercent).toMatch(/^\d+\.\d{2}%$/);
    expect(res.stats.network).toMatch(/^[\d.]+\w+ \/ [\d.]+\w+$/);
    expect(res.stats.uptimeFormatted).toMatch(/^\d+[smhd]/);
  });
});

describe('agent verification', () => {
  it('eas: stores only an attestation read on chain that exists, is live, has the schema and names the wallet; chain down is 503', async () => {
    const rpc = await startFakeJsonRpc();
    try {
      const { user, agentId } = await agentOf();
      const wallet = privateKeyToAccount(generatePrivateKey()).address;
      const other = privateKeyToAccount(generatePrivateKey()).address;
      const zero = `0x${'00'.repeat(32)}` as Hex;
      const live = (uid: string, over: Partial<Attestation> = {}): Attestation => ({
        uid: uid as Hex,
        schema: EAS_SCHEMA,
        time: 1_700_000_000n,
        expirationTime: 0n,
        revocationTime: 0n,
        refUID: zero,
        recipient: wallet,
        attester: other,
        revocable: true,
        data: '0x',
        ...over,
      });
      const uid = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
      rpc.setAttestation(EAS_CONTRACT, live(uid(1)));
      rpc.setAttestation(EAS_CONTRACT, live(uid(2), { revocationTime: 1_700_000_100n }));
      rpc.setAttestation(EAS_CONTRACT, live(uid(3), { schema: `0x${'cd'.repeat(32)}` }));
      rpc.setAttestation(EAS_CONTRACT, live(uid(4), { recipient: other }));
      rpc.setAttestation(EAS_CONTRACT, live(uid(5), { expirationTime: 1_700_000_001n }));
      const post = (attestationUid: string) =>
        call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'eas', attestationUid, walletAddress: wallet } });

      const unconfigured = await post(uid(1));
      expect([unconfigured.status, unconfigured.body.code]).toEqual([503, 'EAS_NOT_CONFIGURED']);
      reloadConfig({ EAS_RPC_URL: rpc.url, EAS_SCHEMA_UID: EAS_SCHEMA, EAS_CONTRACT_ADDRESS: EAS_CONTRACT });
      for (const [attestationUid, code] of [
        [zero, 'ATTESTATION_NOT_FOUND'],
        [uid(9), 'ATTESTATION_NOT_FOUND'],
        [uid(2), 'ATTESTATION_REVOKED'],
        [uid(3), 'ATTESTATION_SCHEMA_MISMATCH'],
        [uid(4), 'ATTESTATION_RECIPIENT_MISMATCH'],
        [uid(5), 'ATTESTATION_EXPIRED'],
      ]) {
        const res = await post(attestationUid);
        expect({ attestationUid, status: res.status, code: res.body.code }).toEqual({ attestationUid, status: 422, code });
      }
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);
      expect(rpc.calls.filter((m) => m === 'eth_call').length).toBe(6);

      const res = await post(uid(1));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, verified: true, verificationType: 'eas', attestationUid: uid(1) });
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({
        verified: true,
        verificationType: 'eas',
        attestationUid: uid(1),
        verifierAddress: wallet,
        metadata: { checked: 'eas-attestation', schema: EAS_SCHEMA, attester: other },
      });
      expect((await call('DELETE', `/api/agents/${agentId}/verify`, { session: user })).body).toEqual({ success: true });
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);

      rpc.mode = 'http-error';
      const down = await post(uid(1));
      expect([down.status, down.body.code]).toEqual([503, 'CHAIN_UNAVAILABLE']);
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);
    } finally {
      reloadConfig({ EAS_RPC_URL: undefined, EAS_SCHEMA_UID: undefined, EAS_CONTRACT_ADDRESS: undefined });
      await rpc.close();
    }
  });

  it('webauthn: an assertion is refused, never stored as verified, while no passkey can be registered', async () => {
    const { user, agentId } = await agentOf();
    const res = await call('POST', `/api/agents/${agentId}/verify`, {
      session: user,
      body: { verificationType: 'webauthn', signature: 'MEUCIQDany-assertion' },
    });
    expect([res.status, res.body.code]).toEqual([422, 'WEBAUTHN_UNAVAILABLE']);
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);
  });

  it('checks a wallet signature offline (EIP-191 over the documented message) before recording it', async () => {
    const { user, agentId } = await agentOf();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const signature = await wallet.signMessage({ message: verificationMessage(agentId) });
    const ok = await call('POST', `/api/agents/${agentId}/verify`, {
      session: user,
      body: { verificationType: 'coinbase', walletAddress: wallet.address, signature },
    });
    expect(ok.status).toBe(200);
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({
      verificationType: 'coinbase',
      verifierAddress: wallet.address,
    });

    const other = privateKeyToAccount(generatePrivateKey());
    const wrongSigner = await call('POST', `/api/agents/${agentId}/verify`, {
      session: user,
      body: { verificationType: 'ens', walletAddress: other.address, signature },
    });
    expect(wrongSigner.status).toBe(400);
    expect(wrongSigner.body.code).toBe('VERIFICATION_FAILED');
    const otherAgent = await wallet.signMessage({ message: verificationMessage('agt_another') });
    expect(
      (
        await call('POST', `/api/agents/${agentId}/verify`, {
          session: user,
          body: { verificationType: 'coinbase', walletAddress: wallet.address, signature: otherAgent },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'coinbase', signature: '0xnothex' } })).body.code,
    ).toBe('VERIFICATION_FAILED');
    // The failed attempts left the earlier record alone.
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verifierAddress).toBe(wallet.address);

    const recovered = await call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'ens', signature } });
    expect(recovered.status).toBe(200);
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verifierAddress).toBe(wallet.address);
  });

  it('requires attestationUid for eas and a signature for the others', async () => {
    const { user, agentId } = await agentOf();
    for (const body of [{ verificationType: 'eas' }, { verificationType: 'webauthn' }, { verificationType: 'passport' }]) {
      const res = await call('POST', `/api/agents/${agentId}/verify`, { session: user, body });
      expect(res.status).toBe(400);
    }
  });
});
