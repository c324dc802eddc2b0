import { describe, expect, it } from 'vitest';
import { allRoutes } from '#contract';
import { gatewayToken } from '#data/instances';
import { call, testSession, uniqueIp } from '../helpers/api';
import { badTokens } from '../helpers/tokens';
import { defaultQuery, fillPath, platformErrorOf } from './route-samples';

const protectedRoutes = allRoutes.filter((r) => r.auth === 'session' || r.auth === 'admin');
/** Every route that reads a credential: the user routes and the runtime routes. */
const credentialRoutes = allRoutes.filter((r) => r.auth !== 'none');
const runtimeRoutes = allRoutes.filter((r) => r.auth === 'runtime');
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const label = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

describe('auth on every route (spec section 5)', () => {
  it('the contract has protected routes to check', () => {
    expect(protectedRoutes.length).toBeGreaterThan(60);
  });

  it('the contract has runtime routes to check', () => {
    expect(runtimeRoutes.map(label)).toEqual(
      expect.arrayContaining(['GET /api/instance/{userId}/runtime/state', 'POST /api/instance/{userId}/runtime/chat/completions']),
    );
  });

  it.each(runtimeRoutes.map((r) => [label(r), r] as const))('%s refuses a request with no credential: 401 TOKEN_INVALID', async (_l, route) => {
    const res = await call(route.method, fillPath(route, {}) + defaultQuery(route), { body: route.example, ip: uniqueIp() });
    expect({ status: res.status, code: platformErrorOf(route, res.body)?.code }).toEqual({ status: 401, code: 'TOKEN_INVALID' });
  });

  it.each(runtimeRoutes.map((r) => [label(r), r] as const))(
    "%s refuses the account's own user credentials, session cookie or Bearer: 401 TOKEN_INVALID",
    async (_l, route) => {
      const session = await testSession();
      const path = fillPath(route, { userId: session.userId }) + defaultQuery(route);
      for (const credential of [{ session }, { bearer: session.token }]) {
        const res = await call(route.method, path, { body: route.example, ...credential, ip: uniqueIp() });
        expect({ status: res.status, code: platformErrorOf(route, res.body)?.code }).toEqual({ status: 401, code: 'TOKEN_INVALID' });
      }
    },
  );

  it.each(runtimeRoutes.map((r) => [label(r), r] as const))("%s refuses another account's gateway token: 401 TOKEN_INVALID", async (_l, route) => {
    const owner = await testSession();
    const intruder = await testSession();
    await gatewayToken(owner.userId);
    const res = await call(route.method, fillPath(route, { userId: owner.userId }) + defaultQuery(route), {
      body: route.example,
      bearer: await gatewayToken(intruder.userId),
      ip: uniqueIp(),
    });
    expect({ status: res.status, code: platformErrorOf(route, res.body)?.code }).toEqual({ status: 401, code: 'TOKEN_INVALID' });
    expect(res.text ?? '').not.toContain(owner.userId);
  });

  it.each(protectedRoutes.map((r) => [label(r), r] as const))('%s refuses a request with no credential: 401 AUTH_REQUIRED', async (_l, route) => {
    const res = await call(route.method, fillPath(route, {}) + defaultQuery(route), { body: route.example, ip: uniqueIp() });
    expect(res.status).toBe(401);
    expect(platformErrorOf(route, res.body).code).toBe('AUTH_REQUIRED');
    expect(typeof platformErrorOf(route, res.body).error).toBe('string');
  });

  it.each(protectedRoutes.map((r) => [label(r), r] as const))('%s refuses a non-Bearer Authorization header: 401 AUTH_REQUIRED', async (_l, route) => {
    const res = await call(route.method, fillPath(route, {}) + defaultQuery(route), {
      body: route.example,
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
      ip: uniqueIp(),
    });
    expect(res.status).toBe(401);
    expect(platformErrorOf(route, res.body).code).toBe('AUTH_REQUIRED');
  });

  it.each(credentialRoutes.map((r) => [label(r), r] as const))('%s answers every bad token with 401 TOKEN_INVALID, never a 500', async (_l, route) => {
    const tokens = await badTokens();
    for (const [kind, token] of Object.entries(tokens)) {
      const res = await call(route.method, fillPath(route, {}) + defaultQuery(route), { body: route.example, bearer: token, ip: uniqueIp() });
      expect({ kind, status: res.status, code: platformErrorOf(route, res.body)?.code }).toEqual({ kind, status: 401, code: 'TOKEN_INVALID' });
      expect(res.text).not.toMatch(/at .*\.ts:\d+/); // no stack trace leaves
    }
  });

  it.each(credentialRoutes.map((r) => [label(r), r] as const))('%s refuses a bad session cookie: 401 TOKEN_INVALID', async (_l, route) => {
    const tokens = await badTokens();
    const res = await call(route.method, fillPath(route, {}) + defaultQuery(route), {
      body: route.example,
      headers: { cookie: `session=${tokens.expired}` },
      ip: uniqueIp(),
    });
    expect(res.status).toBe(401);
    expect(platformErrorOf(route, res.body).code).toBe('TOKEN_INVALID');
  });

  const cookieUnsafe = protectedRoutes.filter((r) => UNSAFE.has(r.method));
  it.each(cookieUnsafe.map((r) => [label(r), r] as const))('%s with a session cookie but no CSRF token: 403', async (_l, route) => {
    // An admin route refuses a non-admin before it looks at CSRF, so it is called as an admin.
    const session = await testSession({ admin: route.auth === 'admin' });
    const res = await call(route.method, fillPath(route, { userId: session.userId }) + defaultQuery(route), {
      body: route.example,
      session,
      csrf: false,
      ip: uniqueIp(),
    });
    expect(res.status).toBe(403);
    expect(platformErrorOf(route, res.body).code).toBe('CSRF_INVALID');
  });

  it.each(cookieUnsafe.map((r) => [label(r), r] as const))('%s with a CSRF token of another session: 403', async (_l, route) => {
    const session = await testSession();
    const other = await testSession();
    const res = await call(route.method, fillPath(route, { userId: session.userId }) + defaultQuery(route), {
      body: route.example,
      headers: { cookie: `session=${session.token}; csrf_token=${other.csrf}`, 'x-csrf-token': other.csrf },
      ip: uniqueIp(),
    });
    expect(res.status).toBe(403);
  });
});
