import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#contract/route';
import { hashApiKey, generateApiKey } from '#platform/crypto/api-keys';
import { API_KEYS_PER_ACCOUNT, keysContract } from '#contract/keys';
import { apiKeyGlobalKeys, resetApiKeyUseMemo, touchApiKeyLastUsed } from '#data/api-keys';
import * as keys from '#data/keys';
import { getGlobal, tenant, transact, tx } from '#data/tenant';
import { accountSession, call, type TestSession } from '../helpers/api';
import { db } from '#data/client';
import { putTestAgent } from '../security/route-samples';

/** The contract's schema of one answer, to check bodies against what the OpenAPI document promises. */
const schemaOf = (operation: string, status: number) => (keysContract.routes.find((r) => r.operation === operation) as RouteDefinition).responses()[status]!;

async function createKey(session: TestSession, name = 'my key') {
  const res = await call('POST', '/api/keys', { body: { name }, session });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; key: string; createdAt: string };
}

const keyCount = async (userId: string) => (await tenant(userId).get(keys.apiKeyCount(userId), true))?.count;

describe('creating API keys (spec 4.7, 2.10)', () => {
  it('answers 201 with an sk_ key of 32 random bytes, shown once and stored only as its SHA-256', async () => {
    const session = await accountSession();
    const created = await createKey(session, 'CI deploy key');
    expect(created).toEqual({
      id: expect.any(String),
      name: 'CI deploy key',
      key: expect.stringMatching(/^sk_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
    });
    expect(Buffer.from(created.key.slice(3), 'base64url')).toHaveLength(32);
    expect(z.safeParse(schemaOf('createApiKey', 201), created).success).toBe(true);

    const owned = await tenant(session.userId).get(keys.apiKey(session.userId, created.id));
    expect(owned).toMatchObject({ id: created.id, name: 'CI deploy key', keyHash: hashApiKey(created.key), lastUsed: null, createdAt: created.createdAt });
    expect(JSON.stringify(owned)).not.toContain(created.key);
    expect(JSON.stringify(owned)).not.toContain(created.key.slice(3, 30));
    const global = await getGlobal(keys.apiKeyHash(hashApiKey(created.key)));
    expect(global).toMatchObject({ userId: session.userId, email: session.email, keyId: created.id });
    expect(JSON.stringify(global)).not.toContain(created.key);
  });

  it('never shows the key again: list and read give the record with a preview only', async () => {
    const session = await accountSession();
    const created = await createKey(session);
    const list = await call('GET', '/api/keys', { session });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ keys: [{ id: created.id, name: 'my key', keyPreview: expect.any(String), createdAt: created.createdAt, lastUsed: null }] });
    expect(z.safeParse(schemaOf('listApiKeys', 200), list.body).success).toBe(true);
    const one = await call('GET', `/api/keys/${created.id}`, { session });
    expect(one.body).toEqual(list.body.keys[0]);
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(hashApiKey(created.key));
    }
    expect(created.key.startsWith(one.body.keyPreview.split('…')[0])).toBe(true);
    expect(one.body.keyPreview.length).toBeLessThan(16);
  });

  it('refuses a missing, blank or over-long name and accepts 64 characters', async () => {
    const session = await accountSession();
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(65) }, { name: 'ok', userId: 'u_other' }]) {
      const res = await call('POST', '/api/keys', { body, session });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect(await keyCount(session.userId)).toBeUndefined();
    const longest = await createKey(session, 'x'.repeat(64));
    expect(longest.name).toHaveLength(64);
  });

  it("lists the global look-ups of an account's keys, for account deletion", async () => {
    const session = await accountSession();
    const a = await createKey(session, 'a');
    const b = await createKey(session, 'b');
    const globals = await apiKeyGlobalKeys(session.userId);
    expect(globals.map((k) => k.pk).sort()).toEqual([keys.apiKeyHash(hashApiKey(a.key)).pk, keys.apiKeyHash(hashApiKey(b.key)).pk].sort());
  });

  it('accepts a session sent as a Bearer JWT', async () => {
    const session = await accountSession();
    const res = await call('POST', '/api/keys', { body: { name: 'via bearer' }, bearer: session.token });
    expect(res.status).toBe(201);
  });
});

describe('the key lifecycle', () => {
  it('create → authenticate as Bearer → lastUsed recorded → delete → refused on the next request', async () => {
    const session = await accountSession();
    const agentId = await putTestAgent(session.userId);
    const created = await createKey(session);

    const before = Date.now();
    const used = await call('GET', `/api/memory?agentId=${agentId}`, { bearer: created.key });
    expect(used.status).toBe(200);
    expect(used.body.agentId).toBe(agentId);

    const record = await call('GET', `/api/keys/${created.id}`, { session });
    expect(record.body.lastUsed).toEqual(expect.any(String));
    expect(Date.parse(record.body.lastUsed)).toBeGreaterThanOrEqual(before - 1000);

    const deleted = await call('DELETE', `/api/keys/${created.id}`, { session });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });

    const after = await call('GET', `/api/memory?agentId=${agentId}`, { bearer: created.key });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('TOKEN_INVALID');
    expect((await call('GET', `/api/keys/${created.id}`, { session })).status).toBe(404);
    expect((await call('GET', '/api/keys', { session })).body.keys).toEqual([]);
    expect(await getGlobal(keys.apiKeyHash(hashApiKey(created.key)))).toBeUndefined();
    expect(await keyCount(session.userId)).toBe(0);
  });

  it('a key acts for its own account only', async () => {
    const owner = await accountSession();
    const other = await accountSession();
    const othersAgent = await putTestAgent(other.userId);
    const created = await createKey(owner);
    const res = await call('GET', `/api/memory?agentId=${othersAgent}`, { bearer: created.key });
    expect(res.status).toBe(404);
  });

  it('deleting twice: the second answers 404 and the count drops once', async () => {
    const session = await accountSession();
    const a = await createKey(session, 'a');
    await createKey(session, 'b');
    expect((await call('DELETE', `/api/keys/${a.id}`, { session })).status).toBe(200);
    expect((await call('DELETE', `/api/keys/${a.id}`, { session })).status).toBe(404);
    expect(await keyCount(session.userId)).toBe(1);
  });

  it("another user's key id is 404 on read and delete, and the key keeps working", async () => {
    const owner = await accountSession();
    const intruder = await accountSession();
    const created = await createKey(owner);
    for (const method of ['GET', 'DELETE']) {
      const res = await call(method, `/api/keys/${created.id}`, { session: intruder });
      expect(res.status).toBe(404);
      expect(res.text).not.toContain(created.id);
      expect(res.text).not.toContain('my key');
    }
    const agentId = await putTestAgent(owner.userId);
    expect((await call('GET', `/api/memory?agentId=${agentId}`, { bearer: created.key })).status).toBe(200);
  });
});

describe('API keys cannot manage API keys', () => {
  it('answers 403 SESSION_REQUIRED on every key route when authenticated with a key, and creates nothing', async () => {
    const session = await accountSession();
    const created = await createKey(session);
    const attempts = [
      call('GET', '/api/keys', { bearer: created.key }),
      call('POST', '/api/keys', { body: { name: 'minted by a key' }, bearer: created.key }),
      call('GET', `/api/keys/${created.id}`, { bearer: created.key }),
      call('DELETE', `/api/keys/${created.id}`, { bearer: created.key }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('SESSION_REQUIRED');
      expect(res.text).not.toContain(created.key);
    }
    expect(await keyCount(session.userId)).toBe(1);
    expect((await call('GET', '/api/keys', { session })).body.keys).toHaveLength(1);
  });
});

describe(`at most ${API_KEYS_PER_ACCOUNT} keys per account`, () => {
  it('30 parallel creates give exactly 25 keys; the rest answer 400 KEY_LIMIT', async () => {
    const session = await accountSession();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call('POST', '/api/keys', { body: { name: `k${i}` }, session })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(API_KEYS_PER_ACCOUNT);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'KEY_LIMIT', limit: API_KEYS_PER_ACCOUNT });
      expect(z.safeParse(schemaOf('createApiKey', 400), r.body).success).toBe(true);
    }
    expect((await call('GET', '/api/keys', { session })).body.keys).toHaveLength(API_KEYS_PER_ACCOUNT);
    expect(await keyCount(session.userId)).toBe(API_KEYS_PER_ACCOUNT);

    // Deleting one frees exactly one place.
    const first = results.find((r) => r.status === 201)!.body;
    expect((await call('DELETE', `/api/keys/${first.id}`, { session })).status).toBe(200);
    expect((await call('POST', '/api/keys', { body: { name: 'again' }, session })).status).toBe(201);
    expect((await call('POST', '/api/keys', { body: { name: 'one too many' }, session })).status).toBe(400);
  });
});

describe('lastUsed is written at most once a minute per key', () => {
  it('writes on first use, skips within the minute (memo or condition), writes again after it', async () => {
    const session = await accountSession();
    const { id } = await createKey(session);
    const stored = async () => (await tenant(session.userId).get(keys.apiKey(session.userId, id), true))?.lastUsed;
    const t0 = Date.parse('2030-01-01T00:00:00.000Z');

    expect(await touchApiKeyLastUsed(session.userId, id, t0)).toBe(true);
    expect(await stored()).toBe('2030-01-01T00:00:00.000Z');
    expect(await touchApiKeyLastUsed(session.userId, id, t0 + 30_000)).toBe(false);

    // Another container (no memo) within the minute: the database condition refuses the write.
    resetApiKeyUseMemo();
    expect(await touchApiKeyLastUsed(session.userId, id, t0 + 59_000)).toBe(false);
    expect(await stored()).toBe('2030-01-01T00:00:00.000Z');

    // That container now holds off for a minute from its own attempt, without asking the database.
    expect(await touchApiKeyLastUsed(session.userId, id, t0 + 61_000)).toBe(false);
    expect(await touchApiKeyLastUsed(session.userId, id, t0 + 120_000)).toBe(true);
    expect(await stored()).toBe('2030-01-01T00:02:00.000Z');

    // A fresh container after the minute writes at once.
    resetApiKeyUseMemo();
    expect(await touchApiKeyLastUsed(session.userId, id, t0 + 181_000)).toBe(true);
    expect(await stored()).toBe('2030-01-01T00:03:01.000Z');
  });

  it('never re-creates the record of a deleted key', async () => {
    const session = await accountSession();
    const { id } = await createKey(session);
    expect((await call('DELETE', `/api/keys/${id}`, { session })).status).toBe(200);
    expect(await touchApiKeyLastUsed(session.userId, id)).toBe(false);
    expect(await tenant(session.userId).get(keys.apiKey(session.userId, id), true)).toBeUndefined();
  });

  it('a key this container knows costs one BatchGet of its look-up and its account, and still stops at once when either goes', async () => {
    const session = await accountSession();
    const agentId = await putTestAgent(session.userId);
    const created = await createKey(session);
    const memoryRead = () => call('GET', `/api/memory?agentId=${agentId}`, { bearer: created.key });
    expect((await memoryRead()).status).toBe(200);

    // Every command of the next request, with the items it names.
    const client = db();
    const original = client.send.bind(client);
    const sent: { name: string; keys: string[] }[] = [];
    client.send = ((command: { constructor: { name: string }; input?: Record<string, any> }, ...rest: unknown[]) => {
      const input = command.input ?? {};
      const named = input.Key ? [input.Key] : Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((r) => r.Keys ?? []);
      sent.push({ name: command.constructor.name, keys: (named as { pk: string; sk: string }[]).map((k) => `${k.pk}|${k.sk}`) });
      return (original as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof client.send;
    let res: Awaited<ReturnType<typeof call>>;
    try {
      res = await memoryRead();
    } finally {
      client.send = original;
    }
    expect(res.status).toBe(200);
    // The look-up and the profile in one round trip, nothing else about the key (lastUsed was written a moment ago); then the route's own read.
    const lookUp = `${keys.apiKeyHash(hashApiKey(created.key)).pk}|APIKEY`;
    const profileKey = `${keys.profile(session.userId).pk}|PROFILE`;
    expect(sent[0]).toEqual({ name: 'BatchGetCommand', keys: [lookUp, profileKey] });
    expect(sent.slice(1).filter((c) => c.keys.some((k) => k === lookUp || k === profileKey || k.includes('|APIKEY#')))).toEqual([]);

    // The account is gone (its profile deleted): the remembered key is refused on the very next request.
    const profile = await tenant(session.userId).get(keys.profile(session.userId), true);
    await tenant(session.userId).delete(keys.profile(session.userId));
    try {
      const refused = await memoryRead();
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('TOKEN_INVALID');
    } finally {
      await tenant(session.userId).put(profile!);
    }
    expect((await memoryRead()).status).toBe(200);
  });

  it('admin rights of a keyed request follow the account as it is now, also for a key the container knows', async () => {
    const session = await accountSession();
    const created = await createKey(session);
    // An operator-only route with an empty import: 403 before the rights, 400 (validation comes after auth) with them.
    const adminRoute = () => call('POST', '/api/skills/venue-finder/catalogue', { bearer: created.key, body: { venues: [] } });
    expect((await adminRoute()).status).toBe(403);
    // The address becomes a proven admin address: the next keyed request has the rights, the key's stored address notwithstanding.
    await tenant(session.userId).update(keys.profile(session.userId), {
      expression: 'SET email = :email, emailVerified = :true',
      values: { ':email': 'admin@example.com', ':true': true },
    });
    expect((await adminRoute()).status).toBe(400);
  });

  it('a failure to record use never fails the request', async () => {
    const session = await accountSession();
    const agentId = await putTestAgent(session.userId);
    // A key id too long for a sort key makes the lastUsed write itself fail (a DynamoDB validation error).
    // A fresh key: the table is shared by every test file, and a fixed value would become "known" to them all.
    const key = generateApiKey();
    await expect(touchApiKeyLastUsed(session.userId, 'x'.repeat(2000))).rejects.toThrow();
    await transact([tx.put({ ...keys.apiKeyHash(hashApiKey(key)), userId: session.userId, email: session.email, keyId: 'x'.repeat(2000) })]);
    const res = await call('GET', `/api/memory?agentId=${agentId}`, { bearer: key });
    expect(res.status).toBe(200);
  });
});
