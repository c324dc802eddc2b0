import { createHash, randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { socialEmail } from '#functions/http/social/session';
import { authenticate } from '#domain/auth/authenticate';
import { revokeSessions } from '#domain/auth/session-gate';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { deleteAccount, findUserIdByEmail } from '#data/users';
import { call, uniqueIp } from '../helpers/api';
import { captureEvents } from '../helpers/event-queue';
import { refusedUrl, startFakeJsonRpc, type FakeJsonRpc } from '../helpers/fake-json-rpc';

const ISSUER = 'https://auth.social.example';
const AUDIENCE = '127.0.0.1:3000';

/** The identity provider: an Ed25519 key whose public half is served as a JWKS on loopback. */
let signingKey: CryptoKey;
let jwksServer: Server;
let jwksUrl: string;
let rpc: FakeJsonRpc;
let events: Awaited<ReturnType<typeof captureEvents>>;
const TOKEN = privateKeyToAccount(generatePrivateKey()).address;
const rich = privateKeyToAccount(generatePrivateKey()).address;
const poor = privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  signingKey = privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'social-1', alg: 'EdDSA', use: 'sig' };
  jwksServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
  rpc = await startFakeJsonRpc();
  rpc.setTokenBalance(TOKEN, rich, 5000n);
  rpc.setTokenBalance(TOKEN, poor, 4999n);
});
afterAll(async () => {
  jwksServer.closeAllConnections();
  await new Promise((r) => jwksServer.close(r));
  await rpc.close();
});
beforeEach(async () => {
  reloadConfig({ SOCIAL_JWKS_URL: jwksUrl, SOCIAL_ISSUER: ISSUER, SOCIAL_AUDIENCE: AUDIENCE });
  events = await captureEvents();
});
afterEach(async () => {
  await events.stop();
  reloadConfig({
    SOCIAL_JWKS_URL: undefined,
    SOCIAL_ISSUER: undefined,
    SOCIAL_AUDIENCE: undefined,
    GATING_TOKEN_ADDRESS: undefined,
    GATING_MIN_BALANCE: undefined,
    GATING_RPC_URL: undefined,
  });
});

const newFid = () => randomInt(1, 2 ** 40);

/** A token as the provider issues it (`sub` is the fid, as a number); `over` breaks one thing. */
async function fidToken(fid: number | string, over: { issuer?: string; audience?: string; exp?: number | string; key?: CryptoKey; alg?: string } = {}) {
  // jose's setSubject takes only strings; the provider writes the fid as a number.
  return new SignJWT({ sub: fid } as JWTPayload)
    .setProtectedHeader({ alg: over.alg ?? 'EdDSA', kid: 'social-1', typ: 'JWT' })
    .setIssuer(over.issuer ?? ISSUER)
    .setAudience(over.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(over.exp ?? '10m')
    .sign(over.key ?? signingKey);
}

const verify = (body: unknown) => call('POST', '/api/auth/social/verify', { body, ip: uniqueIp() });
const refresh = (body: unknown) => call('POST', '/api/auth/social/refresh', { body, ip: uniqueIp() });
const jwtOf = (sessionToken: string) => Buffer.from(sessionToken, 'base64').toString('utf8');

describe('metadata endpoints', () => {
  it.each([
    ['/api/auth/social/verify', ['fidToken']],
    ['/api/auth/social/refresh', ['refreshToken']],
  ])('GET %s describes the POST', async (path, required) => {
    const res = await call('GET', path, { ip: uniqueIp() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ endpoint: path, method: 'POST', requiredFields: required });
    expect(res.body.response).toContain('sessionToken');
  });
});

describe('POST /api/auth/social/verify', () => {
  it('a valid token signs the fid in: base64 session token (a 1-day platform JWT), refresh token, user created once', async () => {
    const fid = newFid();
    const res = await verify({ fidToken: await fidToken(fid) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      fid: String(fid),
      address: null,
      tokenGated: false,
      accessLevel: 'basic',
      expiresIn: 86400,
      message: expect.any(String),
    });
    expect(res.body.sessionToken).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(res.body.refreshToken, 'base64')).toHaveLength(32);

    const jwt = jwtOf(res.body.sessionToken);
    const claims = decodeJwt(jwt);
    expect(claims.exp! - claims.iat!).toBe(86400);
    const auth = (await authenticate(`Bearer ${jwt}`, undefined))!;
    expect(auth.email).toBe(socialEmail(String(fid)));
    expect(await getGlobal(keys.socialIdentity(String(fid)), true)).toMatchObject({ userId: auth.userId });
    // Only the refresh token's hash is stored.
    expect(await getGlobal(keys.socialRefresh(createHash('sha256').update(res.body.refreshToken).digest('hex')), true)).toMatchObject({ userId: auth.userId });

    const again = await verify({ fidToken: await fidToken(String(fid)) });
    expect((await authenticate(`Bearer ${jwtOf(again.body.sessionToken)}`, undefined))!.userId).toBe(auth.userId);
    const created = (await events.drain()).filter((e) => e.type === 'user.created');
    expect(created.map((e) => e.data)).toEqual([expect.objectContaining({ userId: auth.userId, method: 'social' })]);
  });

  it('deleting the account frees the fid: the next verification creates a new account', async () => {
    const fid = newFid();
    const first = await verify({ fidToken: await fidToken(fid) });
    const { userId } = (await authenticate(`Bearer ${jwtOf(first.body.sessionToken)}`, undefined))!;
    await deleteAccount(userId);
    expect(await getGlobal(keys.socialIdentity(String(fid)), true)).toBeUndefined();
    const again = await verify({ fidToken: await fidToken(fid) });
    expect(again.status).toBe(200);
    const next = (await authenticate(`Bearer ${jwtOf(again.body.sessionToken)}`, undefined))!;
    expect(next.userId).not.toBe(userId);
    expect((await refresh({ refreshToken: first.body.refreshToken })).status).toBe(401);
  });

  it('a missing or empty fidToken is a 401', async () => {
    for (const body of [{}, { fidToken: '' }, { address: rich }, { fidToken: 42 }, null]) {
      const res = await verify(body);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('FID_TOKEN_REQUIRED');
    }
  });

  it('a malformed address or an unknown field is a 400', async () => {
    const token = await fidToken(newFid());
    for (const body of [
      { fidToken: token, address: '0x123' },
      { fidToken: token, extra: true },
    ]) {
      const res = await verify(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('tokens that do not verify are a 401: other key, issuer, audience, expired, unsigned, HMAC, not a fid, garbage', async () => {
    const fid = newFid();
    const other = (await generateKeyPair('EdDSA', { crv: 'Ed25519' })).privateKey;
    const hmacKey = new TextEncoder().encode('x'.repeat(32));
    const bad = [
      await fidToken(fid, { key: other }),
      await fidToken(fid, { issuer: 'https://evil.example' }),
      await fidToken(fid, { audience: 'evil.example' }),
      await fidToken(fid, { exp: Math.floor(Date.now() / 1000) - 60 }),
      new UnsecuredJWT({ sub: String(fid), iss: ISSUER, aud: AUDIENCE }).setExpirationTime('10m').encode(),
      await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', kid: 'social-1' })
        .setSubject(String(fid))
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('10m')
        .sign(hmacKey),
      await fidToken('not-a-fid'),
      'not.a.jwt',
    ];
    for (const token of bad) {
      const res = await verify({ fidToken: token });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 401, code: 'FID_TOKEN_INVALID' });
    }
    expect(await findUserIdByEmail(socialEmail(String(fid)))).toBeUndefined();
  });

  it('503 when the provider is not configured or its key set cannot be fetched', async () => {
    const token = await fidToken(newFid());
    reloadConfig({ SOCIAL_JWKS_URL: undefined });
    expect((await verify({ fidToken: token })).body.code).toBe('SOCIAL_NOT_CONFIGURED');
    reloadConfig({ SOCIAL_JWKS_URL: `${await refusedUrl()}/jwks.json` });
    const res = await verify({ fidToken: token });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SOCIAL_PROVIDER_UNAVAILABLE');
  });

  it('with an address, the gating check runs: enough balance → token-holder, short → 403 with required and minBalance', async () => {
    reloadConfig({ GATING_TOKEN_ADDRESS: TOKEN, GATING_MIN_BALANCE: '5000', GATING_RPC_URL: rpc.url });
    const ok = await verify({ fidToken: await fidToken(newFid()), address: rich });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ address: rich, tokenGated: true, accessLevel: 'token-holder' });

    const fid = newFid();
    const short = await verify({ fidToken: await fidToken(fid), address: poor });
    expect(short.status).toBe(403);
    expect(short.body).toMatchObject({ code: 'TOKEN_GATING_FAILED', minBalance: '5000', required: expect.stringContaining('5000') });
    expect(short.body.sessionToken).toBeUndefined();
    expect(await findUserIdByEmail(socialEmail(String(fid)))).toBeUndefined();
  });
});

describe('POST /api/auth/social/refresh', () => {
  async function opened() {
    const res = await verify({ fidToken: await fidToken(newFid()) });
    expect(res.status).toBe(200);
    return res.body as { sessionToken: string; refreshToken: string };
  }

  it('a refresh token gets a new session token (expiresIn 86400) and a successor; each works once', async () => {
    const first = await opened();
    const res = await refresh({ refreshToken: first.refreshToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, expiresIn: 86400, message: expect.any(String) });
    expect(res.body.sessionToken).not.toBe(first.sessionToken);
    expect(res.body.refreshToken).not.toBe(first.refreshToken);
    const before = (await authenticate(`Bearer ${jwtOf(first.sessionToken)}`, undefined))!;
    const after = (await authenticate(`Bearer ${jwtOf(res.body.sessionToken)}`, undefined))!;
    expect(after.userId).toBe(before.userId);

    const replay = await refresh({ refreshToken: first.refreshToken });
    expect({ status: replay.status, code: replay.body.code }).toEqual({ status: 401, code: 'REFRESH_TOKEN_INVALID' });
    expect((await refresh({ refreshToken: res.body.refreshToken })).status).toBe(200);
  });

  it('a missing token is a 400, an unknown one a 401', async () => {
    expect((await refresh({})).status).toBe(400);
    expect((await refresh({ refreshToken: '' })).status).toBe(400);
    expect((await refresh({ refreshToken: Buffer.alloc(32, 7).toString('base64') })).status).toBe(401);
    expect((await refresh({ refreshToken: 'not base64 at all!' })).status).toBe(401);
  });

  it("revoking the account's sessions (password change or reset) voids its refresh tokens", async () => {
    const first = await opened();
    const { userId } = (await authenticate(`Bearer ${jwtOf(first.sessionToken)}`, undefined))!;
    await new Promise((r) => setTimeout(r, 5));
    await revokeSessions(userId);
    const res = await refresh({ refreshToken: first.refreshToken });
    expect(res.status).toBe(401);
  });
});
