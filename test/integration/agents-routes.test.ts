import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeAbiParameters, type Hex } from 'viem';
import { verificationMessage } from '#functions/http/agent-verification/verify';
import type { Attestation } from '#adapters/eas';
import { config, reloadConfig, coinbaseVerificationConfig, ensConfig } from '#platform/config';
import { handler } from '#functions/workers/provisioner/handler';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { call, accountSession, uniqueIp, type TestSession } from '../helpers/api';
import { startFakeJsonRpc } from '../helpers/fake-json-rpc';
import { otherP256Key, SoftwarePasskey } from '../helpers/software-passkey';
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
      const signer = privateKeyToAccount(generatePrivateKey());
      const wallet = signer.address;
      const signature = await signer.signMessage({ message: verificationMessage(agentId) });
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
        call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'eas', attestationUid, walletAddress: wallet, signature } });

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

  it('eas: a quoted recipient the account has not proven is refused; a proven sign-in wallet is the recipient when walletAddress is omitted', async () => {
    const rpc = await startFakeJsonRpc();
    try {
      reloadConfig({ EAS_RPC_URL: rpc.url, EAS_SCHEMA_UID: EAS_SCHEMA, EAS_CONTRACT_ADDRESS: EAS_CONTRACT });
      const { user, agentId } = await agentOf();
      const victim = privateKeyToAccount(generatePrivateKey());
      const mine = privateKeyToAccount(generatePrivateKey());
      const zero = `0x${'00'.repeat(32)}` as Hex;
      const attestation = (uid: string, recipient: string): Attestation => ({
        uid: uid as Hex,
        schema: EAS_SCHEMA,
        time: 1_700_000_000n,
        expirationTime: 0n,
        revocationTime: 0n,
        refUID: zero,
        recipient: recipient as Hex,
        attester: victim.address,
        revocable: true,
        data: '0x',
      });
      const victimUid = `0x${'71'.repeat(32)}`;
      const mineUid = `0x${'72'.repeat(32)}`;
      rpc.setAttestation(EAS_CONTRACT, attestation(victimUid, victim.address));
      rpc.setAttestation(EAS_CONTRACT, attestation(mineUid, mine.address));
      const post = (body: Record<string, unknown>) =>
        call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'eas', ...body } });

      // Someone else's public attestation, its recipient quoted: refused, nothing stored.
      const quoted = await post({ attestationUid: victimUid, walletAddress: victim.address });
      expect([quoted.status, quoted.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
      const forged = await post({
        attestationUid: victimUid,
        walletAddress: victim.address,
        signature: await mine.signMessage({ message: verificationMessage(agentId) }),
      });
      expect([forged.status, forged.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
      const none = await post({ attestationUid: victimUid });
      expect([none.status, none.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);

      // The account proves its sign-in wallet (SIWE): that address is the recipient, walletAddress omitted.
      await tenant(user.userId).update(keys.profile(user.userId), {
        expression: 'SET walletAddress = :w',
        values: { ':w': mine.address.toLowerCase() },
      });
      const victims = await post({ attestationUid: victimUid });
      expect([victims.status, victims.body.code]).toEqual([422, 'ATTESTATION_RECIPIENT_MISMATCH']);
      const own = await post({ attestationUid: mineUid });
      expect(own.status, own.text).toBe(200);
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({ verified: true, verifierAddress: mine.address });
    } finally {
      reloadConfig({ EAS_RPC_URL: undefined, EAS_SCHEMA_UID: undefined, EAS_CONTRACT_ADDRESS: undefined });
      await rpc.close();
    }
  });

  it('webauthn: a registered passkey verifies the agent with a real assertion; forged, replayed and unknown ones are refused', async () => {
    const { user, agentId } = await agentOf();
    const app = new URL(config().appUrl);
    const passkey = new SoftwarePasskey(app.hostname, app.origin);
    const verifyWith = (assertion: unknown) =>
      call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'webauthn', signature: JSON.stringify(assertion) } });
    const verifyOptions = async () => {
      const res = await call('POST', `/api/agents/${agentId}/webauthn/verify-options`, { session: user });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const stillUnverified = async () => expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);

    const none = await call('POST', `/api/agents/${agentId}/webauthn/verify-options`, { session: user });
    expect([none.status, none.body.code]).toEqual([422, 'NO_PASSKEY']);

    // Registration: without a pending challenge, with a response over another challenge, then for real.
    expect(
      (await call('POST', `/api/agents/${agentId}/webauthn/register`, { session: user, body: { response: passkey.register('bm8tY2hhbGxlbmdl') } })).body.code,
    ).toBe('WEBAUTHN_CHALLENGE_MISSING');
    const creation = await call('POST', `/api/agents/${agentId}/webauthn/register-options`, { session: user });
    expect(creation.status, creation.text).toBe(200);
    expect(creation.body).toMatchObject({ rp: { id: app.hostname }, attestation: 'none' });
    const registered = await call('POST', `/api/agents/${agentId}/webauthn/register`, {
      session: user,
      body: { response: passkey.register(creation.body.challenge) },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.body.credentialId).toBe(passkey.id);
    const again = await call('POST', `/api/agents/${agentId}/webauthn/register`, {
      session: user,
      body: { response: passkey.register(creation.body.challenge) },
    });
    expect([again.status, again.body.code]).toEqual([422, 'WEBAUTHN_CHALLENGE_MISSING']);

    // A wrong signature: the assertion is signed by another key.
    const forged = await verifyWith(passkey.assert((await verifyOptions()).challenge, { signWith: otherP256Key() }));
    expect([forged.status, forged.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
    await stillUnverified();
    // An assertion from another origin (phishing site).
    const phished = await verifyWith(passkey.assert((await verifyOptions()).challenge, { origin: 'https://evil.example' }));
    expect(phished.status).toBe(400);
    // A passkey the account never registered.
    const stranger = new SoftwarePasskey(app.hostname, app.origin);
    const unknown = await verifyWith(stranger.assert((await verifyOptions()).challenge));
    expect([unknown.status, unknown.body.code]).toEqual([422, 'UNKNOWN_PASSKEY']);
    // An assertion over a challenge the server did not issue.
    await verifyOptions();
    const madeUp = await verifyWith(passkey.assert('c29tZS1vdGhlci1jaGFsbGVuZ2U'));
    expect([madeUp.status, madeUp.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
    await stillUnverified();

    const options = await verifyOptions();
    expect(options.allowCredentials).toEqual([expect.objectContaining({ id: passkey.id })]);
    const assertion = passkey.assert(options.challenge);
    const ok = await verifyWith(assertion);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ success: true, verified: true, verificationType: 'webauthn', attestationUid: null });
    expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({
      verified: true,
      verificationType: 'webauthn',
      verifierAddress: null,
      metadata: { checked: 'webauthn-assertion', credentialId: passkey.id, counter: passkey.counter },
    });
    // The same assertion again: its challenge was used up.
    expect((await call('DELETE', `/api/agents/${agentId}/verify`, { session: user })).status).toBe(200);
    const replayed = await verifyWith(assertion);
    expect([replayed.status, replayed.body.code]).toEqual([422, 'WEBAUTHN_CHALLENGE_MISSING']);
    await stillUnverified();
  });

  it('coinbase: the signing wallet must hold the Coinbase Verified Account attestation on EAS; a fresh key no longer passes', async () => {
    const rpc = await startFakeJsonRpc();
    try {
      const { user, agentId } = await agentOf();
      const cb = coinbaseVerificationConfig();
      const wallet = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: verificationMessage(agentId) });
      const post = (body: Record<string, unknown>) =>
        call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'coinbase', ...body } });
      const zero = `0x${'00'.repeat(32)}` as Hex;
      const attestation = (uid: Hex, over: Partial<Attestation> = {}): Attestation => ({
        uid,
        schema: cb.schemaUid,
        time: 1_700_000_000n,
        expirationTime: 0n,
        revocationTime: 0n,
        refUID: zero,
        recipient: wallet.address,
        attester: cb.attester,
        revocable: true,
        data: encodeAbiParameters([{ type: 'bool' }], [true]),
        ...over,
      });

      const unconfigured = await post({ walletAddress: wallet.address, signature });
      expect([unconfigured.status, unconfigured.body.code]).toEqual([503, 'COINBASE_NOT_CONFIGURED']);
      reloadConfig({ EAS_RPC_URL: rpc.url, EAS_CONTRACT_ADDRESS: EAS_CONTRACT });
      // The indexer knows somebody else; for the fresh key it answers the zero UID, as the real one does.
      rpc.setIndexedAttestation(cb.indexer, privateKeyToAccount(generatePrivateKey()).address, cb.schemaUid, `0x${'01'.repeat(32)}`);
      // A valid signature by a fresh key that Coinbase never attested: refused.
      const fresh = await post({ walletAddress: wallet.address, signature });
      expect([fresh.status, fresh.body.code]).toEqual([422, 'COINBASE_NOT_VERIFIED']);
      // Indexed, but issued by someone else, or revoked.
      const forgedUid = `0x${'ab'.repeat(32)}` as Hex;
      rpc.setIndexedAttestation(cb.indexer, wallet.address, cb.schemaUid, forgedUid);
      rpc.setAttestation(EAS_CONTRACT, attestation(forgedUid, { attester: privateKeyToAccount(generatePrivateKey()).address }));
      expect((await post({ walletAddress: wallet.address, signature })).body.code).toBe('ATTESTATION_ATTESTER_MISMATCH');
      const revokedUid = `0x${'cd'.repeat(32)}` as Hex;
      rpc.setIndexedAttestation(cb.indexer, wallet.address, cb.schemaUid, revokedUid);
      rpc.setAttestation(EAS_CONTRACT, attestation(revokedUid, { revocationTime: 1_700_000_500n }));
      expect((await post({ walletAddress: wallet.address, signature })).body.code).toBe('ATTESTATION_REVOKED');
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);

      const liveUid = `0x${'ef'.repeat(32)}` as Hex;
      rpc.setIndexedAttestation(cb.indexer, wallet.address, cb.schemaUid, liveUid);
      rpc.setAttestation(EAS_CONTRACT, attestation(liveUid));
      // The signature must still be the wallet's own over this agent.
      const other = privateKeyToAccount(generatePrivateKey());
      const wrongSigner = await post({ walletAddress: other.address, signature });
      expect([wrongSigner.status, wrongSigner.body.code]).toEqual([400, 'VERIFICATION_FAILED']);
      const otherAgent = await wallet.signMessage({ message: verificationMessage('agt_another') });
      expect((await post({ walletAddress: wallet.address, signature: otherAgent })).status).toBe(400);

      const ok = await post({ walletAddress: wallet.address, signature });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body).toMatchObject({ verified: true, verificationType: 'coinbase', attestationUid: liveUid });
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({
        verificationType: 'coinbase',
        verifierAddress: wallet.address,
        metadata: { checked: 'coinbase-verified-account', schema: cb.schemaUid, attester: cb.attester },
      });
      // The indexer was asked about the signer under the Verified Account schema.
      const indexerCall = rpc.requests.find((r) => r.method === 'eth_call' && (r.params[0] as { to: string }).to.toLowerCase() === cb.indexer.toLowerCase());
      expect(indexerCall).toBeDefined();

      rpc.mode = 'http-error';
      expect((await post({ walletAddress: wallet.address, signature })).body.code).toBe('CHAIN_UNAVAILABLE');
    } finally {
      reloadConfig({ EAS_RPC_URL: undefined, EAS_CONTRACT_ADDRESS: undefined });
      await rpc.close();
    }
  });

  it('ens: the name must resolve to the signing wallet through the Universal Resolver; a fresh key no longer passes', async () => {
    const rpc = await startFakeJsonRpc({ chainId: 1 });
    try {
      const { user, agentId } = await agentOf();
      const resolver = ensConfig().universalResolver;
      const wallet = privateKeyToAccount(generatePrivateKey());
      const signature = await wallet.signMessage({ message: verificationMessage(agentId) });
      const post = (body: Record<string, unknown>) =>
        call('POST', `/api/agents/${agentId}/verify`, { session: user, body: { verificationType: 'ens', ...body } });

      const unconfigured = await post({ signature, ensName: 'nova.eth' });
      expect([unconfigured.status, unconfigured.body.code]).toEqual([503, 'ENS_NOT_CONFIGURED']);
      reloadConfig({ ENS_RPC_URL: rpc.url });
      expect((await post({ signature })).status).toBe(400);
      // A fresh key signing for a name it does not own, or a name that resolves nowhere.
      rpc.setEnsAddress(resolver, 'nova.eth', privateKeyToAccount(generatePrivateKey()).address);
      const notOwner = await post({ signature, ensName: 'nova.eth' });
      expect([notOwner.status, notOwner.body.code]).toEqual([422, 'ENS_NAME_MISMATCH']);
      expect((await post({ signature, ensName: 'unset.eth' })).body.code).toBe('ENS_NAME_MISMATCH');
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body.verified).toBe(false);

      rpc.setEnsAddress(resolver, 'mine.eth', wallet.address);
      const other = privateKeyToAccount(generatePrivateKey());
      expect((await post({ signature: await other.signMessage({ message: verificationMessage(agentId) }), ensName: 'mine.eth' })).body.code).toBe(
        'ENS_NAME_MISMATCH',
      );
      const ok = await post({ signature, ensName: 'Mine.eth' });
      expect(ok.status, ok.text).toBe(200);
      expect((await call('GET', `/api/agents/${agentId}/verify`, { session: user })).body).toMatchObject({
        verificationType: 'ens',
        verifierAddress: wallet.address,
        metadata: { checked: 'ens-name', ensName: 'mine.eth' },
      });

      rpc.mode = 'http-error';
      expect((await post({ signature, ensName: 'mine.eth' })).body.code).toBe('CHAIN_UNAVAILABLE');
    } finally {
      reloadConfig({ ENS_RPC_URL: undefined });
      await rpc.close();
    }
  });

  it('requires attestationUid for eas and a signature for the others', async () => {
    const { user, agentId } = await agentOf();
    for (const body of [{ verificationType: 'eas' }, { verificationType: 'webauthn' }, { verificationType: 'passport' }]) {
      const res = await call('POST', `/api/agents/${agentId}/verify`, { session: user, body });
      expect(res.status).toBe(400);
    }
  });
});
