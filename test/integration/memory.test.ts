import { afterEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { MEMORY_BULK_MAX_KEYS, MEMORY_BULK_MAX_TOTAL_BYTES, MEMORY_VALUE_MAX_BYTES, memoryContract } from '#contract/memory';
import * as keys from '#data/keys';
import { clearAgentMemory, readAgentMemory } from '#data/memory';
import { tenant } from '#data/tenant';
import { call, testSession, type TestSession } from '../helpers/api';
import { putTestAgent } from '../security/route-samples';

const [getRoute, writeRoute] = memoryContract.routes;

/** A string value whose JSON encoding (quotes included) is exactly `bytes` bytes. */
const valueOfEncodedSize = (bytes: number, char = 'a') => char.repeat((bytes - 2) / Buffer.byteLength(char));

const write = (session: TestSession, body: unknown) => call('POST', '/api/memory', { body, session });
const read = (session: TestSession, agentId: string) => call('GET', `/api/memory?agentId=${encodeURIComponent(agentId)}`, { session });

async function ownerWithAgent() {
  const session = await testSession();
  const agentId = await putTestAgent(session.userId);
  return { session, agentId };
}

/** Every memory item of the agent, straight from the table. */
const storedItems = (userId: string, agentId: string) => tenant(userId).queryAll(keys.memoryPrefix(agentId));

afterEach(() => {
  reloadConfig({ MAX_BODY_BYTES: undefined });
});

describe('reading memory (spec 4.6, 2.11)', () => {
  it('an agent with no memory answers an empty map, count 0 and lastUpdated null', async () => {
    const { session, agentId } = await ownerWithAgent();
    const res = await read(session, agentId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ memory: {}, agentId, count: 0, lastUpdated: null });
    expect(getRoute.responses()[200].safeParse(res.body).success).toBe(true);
  });

  it('refuses a missing or malformed agentId with 400', async () => {
    const session = await testSession();
    expect((await call('GET', '/api/memory', { session })).status).toBe(400);
    expect((await read(session, 'has#hash')).status).toBe(400);
  });

  it("another user's agent and a missing agent are both 404, with no data", async () => {
    const owner = await ownerWithAgent();
    await write(owner.session, { agentId: owner.agentId, key: 'secret', memory: 'owner-only-value' });
    const intruder = await testSession();
    const res = await read(intruder, owner.agentId);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('owner-only-value');
    expect((await read(owner.session, 'agt_nobody_has_this')).status).toBe(404);
  });
});

describe('single writes', () => {
  it('stores a value and reads it back with count and lastUpdated', async () => {
    const { session, agentId } = await ownerWithAgent();
    const value = { city: 'Bristol', tags: ['live', 'jazz'], n: 3, ok: true, nothing: null };
    const res = await write(session, { agentId, key: 'favourite_venue', memory: value });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, agentId, key: 'favourite_venue', saved: expect.any(String) });
    expect(writeRoute.responses()[200].safeParse(res.body).success).toBe(true);
    const got = await read(session, agentId);
    expect(got.body).toEqual({ memory: { favourite_venue: value }, agentId, count: 1, lastUpdated: res.body.saved });
  });

  it('writing a key again replaces its value; lastUpdated is the newest write', async () => {
    const { session, agentId } = await ownerWithAgent();
    await write(session, { agentId, key: 'a', memory: 1 });
    await write(session, { agentId, key: 'b', memory: 2 });
    const last = await write(session, { agentId, key: 'a', memory: 'replaced' });
    const got = await read(session, agentId);
    expect(got.body.memory).toEqual({ a: 'replaced', b: 2 });
    expect(got.body.count).toBe(2);
    expect(got.body.lastUpdated).toBe(last.body.saved);
  });

  it('keeps key names and values exactly, whatever characters they hold', async () => {
    const { session, agentId } = await ownerWithAgent();
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i += 1) deep = { d: deep };
    const entries: Record<string, unknown> = {
      'with#hash/and slash': 1,
      'MEMORY#other#key': 2,
      // Computed names make own `__proto__` properties, as JSON.parse does, instead of setting the prototype.
      '🎶 ünïcödé 键': { ['__proto__']: { polluted: true }, list: [{ ['__proto__']: 1 }] },
      ['__proto__']: 'a key named __proto__',
      constructor: 'and one named constructor',
      ['k'.repeat(256)]: 'longest key',
      big: 1e300,
      tiny: 5e-324,
      lone: 'a lone surrogate \ud800 in a value',
      deep,
      empty: '',
    };
    for (const [key, memory] of Object.entries(entries)) {
      const res = await call('POST', '/api/memory', { rawBody: JSON.stringify({ agentId, key, memory }), session });
      expect(res.status, key).toBe(200);
    }
    const got = await read(session, agentId);
    expect(got.body.count).toBe(Object.keys(entries).length);
    for (const [key, value] of Object.entries(entries)) expect(JSON.stringify(got.body.memory[key]), key).toBe(JSON.stringify(value));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses key names that cannot be stored as written', async () => {
    const { session, agentId } = await ownerWithAgent();
    for (const key of ['', 'k'.repeat(257), 'lone \ud800 surrogate']) {
      const res = await call('POST', '/api/memory', { rawBody: JSON.stringify({ agentId, key, memory: 1 }), session });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect(await storedItems(session.userId, agentId)).toEqual([]);
  });

  it('refuses a missing memory, a missing agentId and unknown fields', async () => {
    const { session, agentId } = await ownerWithAgent();
    for (const body of [
      { agentId, key: 'a' },
      { key: 'a', memory: 1 },
      { agentId, key: 'a', memory: 1, userId: 'u_other' },
    ]) {
      const res = await write(session, body);
      expect(res.status).toBe(400);
    }
    expect(await storedItems(session.userId, agentId)).toEqual([]);
  });

  it(`accepts a value of exactly ${MEMORY_VALUE_MAX_BYTES} encoded bytes and refuses one byte more, changing nothing`, async () => {
    const { session, agentId } = await ownerWithAgent();
    const atLimit = valueOfEncodedSize(MEMORY_VALUE_MAX_BYTES);
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(102400);
    const ok = await write(session, { agentId, key: 'k', memory: atLimit });
    expect(ok.status).toBe(200);

    const over = valueOfEncodedSize(MEMORY_VALUE_MAX_BYTES + 1);
    expect(Buffer.byteLength(JSON.stringify(over))).toBe(102401);
    const refused = await write(session, { agentId, key: 'k', memory: over });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'MEMORY_VALUE_TOO_LARGE', limit: MEMORY_VALUE_MAX_BYTES });
    expect(writeRoute.responses()[400].safeParse(refused.body).success).toBe(true);
    expect((await read(session, agentId)).body.memory.k).toBe(atLimit);
  });

  it('measures the encoded UTF-8 bytes, not characters', async () => {
    const { session, agentId } = await ownerWithAgent();
    // 'é' is 2 bytes: 51,200 of them are 102,402 encoded bytes but only 51,200 characters.
    const res = await write(session, { agentId, key: 'accents', memory: 'é'.repeat(51_200) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('MEMORY_VALUE_TOO_LARGE');
    // Escapes count as written: each control character encodes as 6 bytes (\u0001).
    const escaped = await write(session, { agentId, key: 'escaped', memory: '\u0001'.repeat(17_067) });
    expect(escaped.status).toBe(400);
    expect(await storedItems(session.userId, agentId)).toEqual([]);
  });

  it("writing to another user's agent, or a missing one, is 404 and stores nothing anywhere", async () => {
    const owner = await ownerWithAgent();
    const intruder = await testSession();
    const res = await write(intruder, { agentId: owner.agentId, key: 'planted', memory: 'x' });
    expect(res.status).toBe(404);
    expect(await storedItems(owner.session.userId, owner.agentId)).toEqual([]);
    expect(await storedItems(intruder.userId, owner.agentId)).toEqual([]);

    const missing = await write(owner.session, { agentId: 'agt_deleted', key: 'k', memory: 1 });
    expect(missing.status).toBe(404);
    expect(await storedItems(owner.session.userId, 'agt_deleted')).toEqual([]);
  });

  it('an agent deleted after the memory was checked gets no new memory (the write checks it in the same transaction)', async () => {
    const { session, agentId } = await ownerWithAgent();
    expect((await write(session, { agentId, key: 'before', memory: 1 })).status).toBe(200);
    await tenant(session.userId).delete(keys.agent(session.userId, agentId));
    const res = await write(session, { agentId, memory: { after1: 1, after2: 2 } });
    expect(res.status).toBe(404);
    expect((await storedItems(session.userId, agentId)).map((i) => i.key)).toEqual(['before']);
  });

  it('concurrent writes to one key all succeed and leave one of the written values', async () => {
    const { session, agentId } = await ownerWithAgent();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => write(session, { agentId, memory: { hot: i, [`own${i}`]: i } })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const got = await read(session, agentId);
    expect(got.body.count).toBe(9);
    expect([0, 1, 2, 3, 4, 5, 6, 7]).toContain(got.body.memory.hot);
  });
});

describe('bulk writes: at most 50 keys, all-or-nothing', () => {
  const bulkOf = (n: number, value: (i: number) => unknown = (i) => ({ i })) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`key_${String(i).padStart(2, '0')}`, value(i)]));

  it(`writes ${MEMORY_BULK_MAX_KEYS} keys in one request`, async () => {
    const { session, agentId } = await ownerWithAgent();
    const memory = bulkOf(MEMORY_BULK_MAX_KEYS);
    const res = await write(session, { agentId, memory });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, agentId, keysUpdated: 50, saved: expect.any(String) });
    expect(writeRoute.responses()[200].safeParse(res.body).success).toBe(true);
    const got = await read(session, agentId);
    expect(got.body).toEqual({ memory, agentId, count: 50, lastUpdated: res.body.saved });
  });

  it(`refuses ${MEMORY_BULK_MAX_KEYS + 1} keys with 400 and writes none of them`, async () => {
    const { session, agentId } = await ownerWithAgent();
    const res = await write(session, { agentId, memory: bulkOf(MEMORY_BULK_MAX_KEYS + 1) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MEMORY_TOO_MANY_KEYS', limit: 50 });
    expect(await storedItems(session.userId, agentId)).toEqual([]);
  });

  it('refuses an empty bulk write', async () => {
    const { session, agentId } = await ownerWithAgent();
    const res = await write(session, { agentId, memory: {} });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('MEMORY_EMPTY');
  });

  it('a bulk of 50 with one oversize value writes nothing and leaves earlier values as they were', async () => {
    const { session, agentId } = await ownerWithAgent();
    await write(session, { agentId, memory: { key_00: 'old', key_49: 'old too' } });
    const memory = bulkOf(MEMORY_BULK_MAX_KEYS, (i) => (i === 37 ? valueOfEncodedSize(MEMORY_VALUE_MAX_BYTES + 1) : `new ${i}`));
    const res = await write(session, { agentId, memory });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('MEMORY_VALUE_TOO_LARGE');
    const got = await read(session, agentId);
    expect(got.body.memory).toEqual({ key_00: 'old', key_49: 'old too' });
    expect(got.body.count).toBe(2);
  });

  it('a bulk write whose keys are all at the size limit fits in one transaction, up to the aggregate cap', async () => {
    reloadConfig({ MAX_BODY_BYTES: String(8 * 1024 * 1024) });
    const { session, agentId } = await ownerWithAgent();
    const fits = Math.floor(MEMORY_BULK_MAX_TOTAL_BYTES / MEMORY_VALUE_MAX_BYTES);
    const big = (i: number) => valueOfEncodedSize(MEMORY_VALUE_MAX_BYTES, String.fromCharCode(97 + (i % 26)));
    const ok = await write(session, { agentId, memory: bulkOf(fits, big) });
    expect(ok.status).toBe(200);
    expect(ok.body.keysUpdated).toBe(fits);
    expect((await read(session, agentId)).body.count).toBe(fits);

    const other = await ownerWithAgent();
    const tooMuch = await write(other.session, { agentId: other.agentId, memory: bulkOf(fits + 1, big) });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body).toMatchObject({ code: 'MEMORY_BULK_TOO_LARGE', limit: MEMORY_BULK_MAX_TOTAL_BYTES });
    expect(await storedItems(other.session.userId, other.agentId)).toEqual([]);
  });

  it('with the default request cap, a body over 1 MB is refused with 413 before anything is written', async () => {
    const { session, agentId } = await ownerWithAgent();
    const res = await write(session, { agentId, memory: bulkOf(12, () => valueOfEncodedSize(MEMORY_VALUE_MAX_BYTES)) });
    expect(res.status).toBe(413);
    expect(await storedItems(session.userId, agentId)).toEqual([]);
  });
});

describe('the runtime loader', () => {
  it('readAgentMemory returns what the API stored, and undefined for an agent not in the partition', async () => {
    const { session, agentId } = await ownerWithAgent();
    await write(session, { agentId, memory: { a: [1, 2], b: { c: 'd' } } });
    const loaded = await readAgentMemory(session.userId, agentId);
    expect(loaded).toEqual({ memory: { a: [1, 2], b: { c: 'd' } }, count: 2, lastUpdated: expect.any(String) });
    expect(await readAgentMemory((await testSession()).userId, agentId)).toBeUndefined();
  });

  it("clearAgentMemory removes that agent's keys only", async () => {
    const { session, agentId } = await ownerWithAgent();
    const sibling = await putTestAgent(session.userId);
    await write(session, { agentId, memory: { a: 1, b: 2, c: 3 } });
    await write(session, { agentId: sibling, memory: { kept: true } });
    expect(await clearAgentMemory(session.userId, agentId)).toBe(3);
    expect((await read(session, agentId)).body).toEqual({ memory: {}, agentId, count: 0, lastUpdated: null });
    expect((await read(session, sibling)).body.memory).toEqual({ kept: true });
  });
});
