import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { lambdaContext, toApiGatewayEvent } from '#local/server';
import { generateApiKey, hashApiKey } from '#platform/crypto/api-keys';
import { config, reloadConfig } from '#platform/config';
import { defineGroup, type RouteDefinition } from '#contract/route';
import * as keys from '#data/keys';
import { ConditionFailedError, getGlobal, transact, tx } from '#data/tenant';
import { HttpError } from '#http/errors';
import { limitReached } from '#platform/errors';
import { createHandler } from '#http/pipeline';
import { consumeRateLimit } from '#http/rate-limit';
import { reply } from '#http/reply';
import { accountSession, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/** A group that exists only here, to reach every branch of the pipeline. */
const probe = defineGroup({
  group: 'probe',
  description: 'pipeline probe',
  dynamoOnly: true,
  routes: [
    { operation: 'whoami', method: 'GET', path: '/probe/whoami', auth: 'session', summary: 's', responses: () => ({}) },
    { operation: 'adminOnly', method: 'GET', path: '/probe/admin', auth: 'admin', summary: 's', responses: () => ({}) },
    { operation: 'limited', method: 'GET', path: '/probe/limited', auth: 'optional', rateLimit: 'signIn', summary: 's', responses: () => ({}) },
    {
      operation: 'echo',
      method: 'POST',
      path: '/probe/echo/{id}',
      auth: 'session',
      summary: 's',
      params: () => z.strictObject({ id: z.string().regex(/^[a-z0-9]+$/) }),
      query: () => z.object({ n: z.coerce.number().int().max(10).default(1) }),
      body: () => z.strictObject({ name: z.string().min(1) }),
      responses: () => ({}),
    },
    {
      operation: 'boom',
      method: 'GET',
      path: '/probe/boom',
      auth: 'none',
      summary: 's',
      errorFields: { success: false, status: 'error' },
      responses: () => ({}),
    },
    { operation: 'race', method: 'GET', path: '/probe/race', auth: 'none', summary: 's', responses: () => ({}) },
    { operation: 'teapot', method: 'GET', path: '/probe/teapot', auth: 'none', summary: 's', responses: () => ({}) },
    {
      operation: 'domainLimit',
      method: 'GET',
      path: '/probe/domain-limit',
      auth: 'none',
      summary: 's',
      errorFields: { success: false },
      responses: () => ({}),
    },
    { operation: 'unbuilt', method: 'GET', path: '/probe/unbuilt', auth: 'none', summary: 's', responses: () => ({}) },
    { operation: 'cookie', method: 'GET', path: '/probe/cookie', auth: 'none', summary: 's', responses: () => ({}) },
  ],
});

const handler = createHandler(probe, {
  whoami: async ({ auth }) => ({ userId: auth.userId, via: auth.via, isAdmin: auth.isAdmin }),
  adminOnly: async () => ({ ok: true }),
  limited: async () => ({ ok: true }),
  echo: async ({ params, query, body }) => ({ id: params.id, n: query.n, name: body.name }),
  boom: async () => {
    throw new Error('secret internal detail at /srv/app.ts:12');
  },
  race: async () => {
    throw new ConditionFailedError('lost');
  },
  teapot: async () => {
    throw new HttpError(418, 'short and stout', 'TEAPOT', { spout: true });
  },
  domainLimit: async () => {
    throw limitReached('slow down', 'RATE_LIMITED', { retryAfter: 7 }, { retryAfterSeconds: 7 });
  },
  cookie: async () => reply.json(200, { set: true }, { 'x-extra': '1' }, ['a=b; Path=/']),
});

interface Req {
  session?: TestSession;
  bearer?: string;
  body?: string;
  query?: string;
  headers?: Record<string, string>;
  ip?: string;
}

async function invoke(method: string, path: string, opts: Req = {}) {
  const route = probe.routes.find((r) => {
    const re = new RegExp('^' + r.path.replace(/\{\w+\}/g, '([^/]+)') + '$');
    return r.method === method && re.test(path);
  }) as RouteDefinition;
  const paramNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const values = new RegExp('^' + route.path.replace(/\{\w+\}/g, '([^/]+)') + '$').exec(path)!.slice(1);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.session) {
    headers.cookie = `session=${opts.session.token}; csrf_token=${opts.session.csrf}`;
    headers['x-csrf-token'] = opts.session.csrf;
  }
  const event = toApiGatewayEvent({
    method,
    path,
    rawQueryString: opts.query ?? '',
    headers,
    body: opts.body,
    sourceIp: opts.ip ?? uniqueIp(),
    route: { ...route, group: 'probe' },
    params: Object.fromEntries(paramNames.map((n, i) => [n, values[i]!])),
  });
  const res = await handler(event, lambdaContext('probe', event.requestContext.requestId));
  return { ...res, json: res.body ? JSON.parse(res.body) : undefined };
}

afterEach(() => {
  reloadConfig({ JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: undefined, MAX_BODY_BYTES: undefined });
});

describe('authentication', () => {
  it('accepts the session cookie, the Bearer JWT and a Bearer API key, and says which', async () => {
    const s = await accountSession();
    expect((await invoke('GET', '/probe/whoami', { session: s })).json).toEqual({ userId: s.userId, via: 'cookie', isAdmin: false });
    expect((await invoke('GET', '/probe/whoami', { bearer: s.token })).json).toMatchObject({ userId: s.userId, via: 'bearer' });

    const apiKey = generateApiKey();
    await transact([tx.put({ ...keys.apiKeyHash(hashApiKey(apiKey)), userId: s.userId, email: s.email, keyId: 'k1' })]);
    expect((await invoke('GET', '/probe/whoami', { bearer: apiKey })).json).toMatchObject({ userId: s.userId, via: 'apiKey' });

    // A deleted key stops working on the next request.
    await transact([tx.delete(keys.apiKeyHash(hashApiKey(apiKey)))]);
    expect(await getGlobal(keys.apiKeyHash(hashApiKey(apiKey)))).toBeUndefined();
    const res = await invoke('GET', '/probe/whoami', { bearer: apiKey });
    expect(res.statusCode).toBe(401);
    expect(res.json.code).toBe('TOKEN_INVALID');
  });

  it('admin routes: 403 ADMIN_REQUIRED for a user, 200 for an email in ADMIN_EMAILS', async () => {
    const user = await testSession();
    const res = await invoke('GET', '/probe/admin', { bearer: user.token });
    expect(res.statusCode).toBe(403);
    expect(res.json).toEqual({ error: 'admin access required', code: 'ADMIN_REQUIRED' });
    const admin = await testSession({ admin: true });
    expect((await invoke('GET', '/probe/admin', { bearer: admin.token })).statusCode).toBe(200);
  });

  it('a missing JWT secret is the spec 500 AUTH_ERROR, not a crash', async () => {
    const s = await testSession();
    reloadConfig({ JWT_SECRET: undefined });
    expect(config().jwt.secret).toBeUndefined();
    const res = await invoke('GET', '/probe/whoami', { bearer: s.token });
    expect(res.statusCode).toBe(500);
    expect(res.json.code).toBe('AUTH_ERROR');
  });
});

describe('rate limits (DynamoDB, sliding window)', () => {
  it('answers 429 with Retry-After once the window is used up, per client address', async () => {
    reloadConfig({ RATE_LIMITS: JSON.stringify({ signIn: { limit: 3, windowSeconds: 60 } }) });
    const ip = uniqueIp();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await invoke('GET', '/probe/limited', { ip })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await invoke('GET', '/probe/limited', { ip });
    const retryAfter = Number(limited.headers!['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // The counted span is one window plus one slice (1/20 of it).
    expect(retryAfter).toBeLessThanOrEqual(63);
    expect(limited.json.code).toBe('RATE_LIMITED');
    // Another address has its own window.
    expect((await invoke('GET', '/probe/limited', { ip: uniqueIp() })).statusCode).toBe(200);
  });

  it('holds under concurrency: 20 parallel requests against a limit of 5 let exactly 5 through', async () => {
    reloadConfig({ RATE_LIMITS: JSON.stringify({ signIn: { limit: 5, windowSeconds: 600 } }) });
    const ip = uniqueIp();
    const results = await Promise.all(Array.from({ length: 20 }, () => invoke('GET', '/probe/limited', { ip })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(15);
  });

  it('admits no second burst across a window boundary: 300 requests over 2 s pass at most the limit', async () => {
    reloadConfig({ RATE_LIMITS: JSON.stringify({ signIn: { limit: 100, windowSeconds: 60 } }) });
    const subject = `ip:${uniqueIp()}`;
    // 2 s that straddle a minute boundary, where a fixed window restarts its count.
    const boundary = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
    let admitted = 0;
    const attempt = (i: number) =>
      consumeRateLimit('signIn', subject, boundary - 1000 + Math.floor((i * 2000) / 300)).then(
        () => void admitted++,
        (err) => {
          if (!(err instanceof HttpError) || err.status !== 429) throw err;
        },
      );
    // In time order, 20 at a time (as a busy client's parallel requests would arrive).
    for (let i = 0; i < 300; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => attempt(i + j)));
    expect(admitted).toBe(100);
  }, 90_000);

  it('frees a burst only when it leaves the sliding window, and a refused request does not count', async () => {
    reloadConfig({ RATE_LIMITS: JSON.stringify({ signIn: { limit: 10, windowSeconds: 60 } }) });
    const subject = `ip:${uniqueIp()}`;
    const t0 = Math.floor(Date.now() / 3000) * 3000 + 60_000; // the start of a 3 s slice
    for (let i = 0; i < 10; i++) await consumeRateLimit('signIn', subject, t0);
    // Hammering for most of a window admits nothing more...
    for (let s = 1; s < 60; s += 2) await expect(consumeRateLimit('signIn', subject, t0 + s * 1000)).rejects.toMatchObject({ status: 429 });
    const refused = await consumeRateLimit('signIn', subject, t0 + 1000).catch((err: HttpError) => err);
    // ...and says when: the burst's slice leaves the counted span (one window plus one slice) 62 s on.
    expect(Number((refused as HttpError).headers['retry-after'])).toBe(62);
    // The refused requests took their counts back: once the burst has aged out, the full budget is there.
    for (let i = 0; i < 10; i++) await consumeRateLimit('signIn', subject, t0 + 63_000);
    await expect(consumeRateLimit('signIn', subject, t0 + 63_000)).rejects.toMatchObject({ status: 429 });
  });
});

describe('validation and errors', () => {
  it('validates params, query and body with zod and coerces the query', async () => {
    const s = await testSession();
    const ok = await invoke('POST', '/probe/echo/abc', { bearer: s.token, query: 'n=7', body: '{"name":"x"}' });
    expect(ok.json).toEqual({ id: 'abc', n: 7, name: 'x' });

    const badParam = await invoke('POST', '/probe/echo/ABC', { bearer: s.token, body: '{"name":"x"}' });
    expect(badParam.statusCode).toBe(400);
    expect(badParam.json.issues[0].path).toBe('params.id');

    const badQuery = await invoke('POST', '/probe/echo/abc', { bearer: s.token, query: 'n=11', body: '{"name":"x"}' });
    expect(badQuery.json.issues[0].path).toBe('query.n');

    const extra = await invoke('POST', '/probe/echo/abc', { bearer: s.token, body: '{"name":"x","role":"admin"}' });
    expect(extra.statusCode).toBe(400);
    expect(extra.json.issues[0].message).toContain('role');

    const empty = await invoke('POST', '/probe/echo/abc', { bearer: s.token, body: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json.issues[0].path).toBe('body.name');
  });

  it('caps the body size with 413', async () => {
    reloadConfig({ MAX_BODY_BYTES: '64' });
    const s = await testSession();
    const res = await invoke('POST', '/probe/echo/abc', { bearer: s.token, body: JSON.stringify({ name: 'x'.repeat(100) }) });
    expect(res.statusCode).toBe(413);
    expect(res.json.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an unexpected error is a 500 without the message or a stack trace, with the route error fields', async () => {
    const res = await invoke('GET', '/probe/boom');
    expect(res.statusCode).toBe(500);
    expect(res.json).toEqual({ success: false, status: 'error', error: 'internal error', code: 'INTERNAL' });
    expect(res.body).not.toContain('secret internal detail');
    expect(res.headers!['x-request-id']).toMatch(/[0-9a-f-]{36}/);
  });

  it('a lost write race is a 409, and HttpError keeps its status, code and extra fields', async () => {
    expect((await invoke('GET', '/probe/race')).statusCode).toBe(409);
    const teapot = await invoke('GET', '/probe/teapot');
    expect(teapot.statusCode).toBe(418);
    expect(teapot.json).toEqual({ error: 'short and stout', code: 'TEAPOT', spout: true });
  });

  it('a domain failure answers with the status of its kind, the route error fields, its details and its hint as a header', async () => {
    const res = await invoke('GET', '/probe/domain-limit');
    expect(res.statusCode).toBe(429);
    expect(res.json).toEqual({ success: false, retryAfter: 7, error: 'slow down', code: 'RATE_LIMITED' });
    expect(res.headers!['retry-after']).toBe('7');
    expect(res.headers!['x-request-id']).toMatch(/[0-9a-f-]{36}/);
  });

  it('a route whose operation is not built answers 501 NOT_IMPLEMENTED through the pipeline', async () => {
    const res = await invoke('GET', '/probe/unbuilt');
    expect(res.statusCode).toBe(501);
    expect(res.json).toEqual({ error: 'not implemented', code: 'NOT_IMPLEMENTED' });
  });

  it('replies carry their status, headers and cookies', async () => {
    const res = await invoke('GET', '/probe/cookie');
    expect(res.cookies).toEqual(['a=b; Path=/']);
    expect(res.headers!['x-extra']).toBe('1');
    expect(res.headers!['cache-control']).toBe('no-store');
  });
});

describe('tenant repository', () => {
  it('refuses keys outside the caller partition before any I/O', async () => {
    const { tenant } = await import('#data/tenant');
    const mine = tenant(`u_${randomUUID()}`);
    await expect(mine.get(keys.profile('someone-else'))).rejects.toThrow('outside the caller partition');
    await expect(mine.put({ ...keys.agent('someone-else', 'a1') })).rejects.toThrow('outside the caller partition');
  });

  it('pages with an opaque cursor that cannot be pointed at another partition', async () => {
    const { tenant, InvalidCursorError } = await import('#data/tenant');
    const a = tenant(`u_${randomUUID()}`);
    const b = tenant(`u_${randomUUID()}`);
    for (let i = 0; i < 5; i++) await a.put({ ...keys.agent(a.userId, `a${i}`), n: i });
    await b.put({ ...keys.agent(b.userId, 'b0') });
    const page1 = await a.query(keys.agentPrefix, { limit: 2 });
    expect(page1.items.map((i) => i.n)).toEqual([0, 1]);
    const page2 = await a.query(keys.agentPrefix, { limit: 2, cursor: page1.cursor });
    expect(page2.items.map((i) => i.n)).toEqual([2, 3]);
    await expect(b.query(keys.agentPrefix, { cursor: page1.cursor })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(a.query(keys.agentPrefix, { cursor: 'garbage' })).rejects.toBeInstanceOf(InvalidCursorError);
    expect(await a.queryAll(keys.agentPrefix)).toHaveLength(5);
  });

  it('conditional writes settle races: of 10 parallel creates of one item exactly one wins', async () => {
    const { tenant } = await import('#data/tenant');
    const t = tenant(`u_${randomUUID()}`);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => t.put({ ...keys.agent(t.userId, 'same'), i }, { expression: 'attribute_not_exists(pk)' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ConditionFailedError)).toHaveLength(9);
  });
});
