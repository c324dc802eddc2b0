import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config, reloadConfig } from '#platform/config';
import { resetDbClient } from '#data/client';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { restoreDatabase, startPausableProxy } from '../helpers/pausable-proxy';

/**
 * Authentication and the rate-limit write run inside the request's deadline.
 * With the table paused, a request stalled in either answers 504 DEADLINE_EXCEEDED when the
 * deadline is the shorter budget, 503 BACKEND_UNAVAILABLE when the table's is: never 500, never
 * held until the table comes back.
 */
const DEADLINE_MS = 700;
let proxy: Awaited<ReturnType<typeof startPausableProxy>>;
let realEndpoint: string;
let user: TestSession;
let apiKey: string;

const useBudget = (settings: Record<string, string>) => {
  reloadConfig({ DYNAMODB_ENDPOINT: proxy.url, ...settings });
  resetDbClient();
};

async function timed(run: () => ReturnType<typeof call>) {
  const started = Date.now();
  const res = await run();
  return { res, ms: Date.now() - started };
}

beforeAll(async () => {
  realEndpoint = config().dynamoEndpoint!;
  user = await accountSession();
  const created = await call('POST', '/api/keys', { bearer: user.token, body: { name: 'deadline-test' } });
  expect(created.status).toBe(201);
  apiKey = created.body.key;
  proxy = await startPausableProxy(new URL(realEndpoint));
});

afterAll(async () => {
  proxy.resume();
  restoreDatabase(realEndpoint, ['REQUEST_DEADLINE_MS']);
  await proxy.close();
});

describe('the request deadline covers authentication and rate limiting', () => {
  it('answers 504 DEADLINE_EXCEEDED when the deadline passes first, for session and API-key auth and the rate-limit write', async () => {
    // The table's own budget (5 s) is far longer than the request's, so only the deadline can answer in time.
    useBudget({ REQUEST_DEADLINE_MS: String(DEADLINE_MS), DYNAMODB_REQUEST_TIMEOUT_MS: '5000', DYNAMODB_MAX_ATTEMPTS: '1' });
    // Loads both groups' handlers first, so the timings below are the requests' own.
    expect((await call('GET', '/api/agents', { bearer: user.token })).status).toBe(200);
    expect((await call('POST', '/api/auth/forgot-password', { body: { email: 'nobody@example.com' }, ip: uniqueIp() })).status).toBe(200);
    proxy.pause();
    try {
      const stalls = {
        sessionAuth: () => call('GET', '/api/agents', { bearer: user.token }),
        apiKeyAuth: () => call('GET', '/api/agents', { bearer: apiKey }),
        rateLimitWrite: () => call('POST', '/api/auth/forgot-password', { body: { email: 'nobody@example.com' }, ip: uniqueIp() }),
      };
      const figures: Record<string, number> = {};
      for (const [name, run] of Object.entries(stalls)) {
        const { res, ms } = await timed(run);
        figures[name] = ms;
        expect(res.status, name).toBe(504);
        expect(res.body, name).toEqual({ error: expect.any(String), code: 'DEADLINE_EXCEEDED' });
        expect(ms, name).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
        expect(ms, name).toBeLessThan(DEADLINE_MS + 1000);
      }
      console.info('deadline answers under a paused table (ms):', figures);
    } finally {
      proxy.resume();
    }
    expect((await call('GET', '/api/agents', { bearer: apiKey })).status).toBe(200);
  });

  it('answers 503 BACKEND_UNAVAILABLE, not 500 AUTH_ERROR, when the table gives up inside the deadline', async () => {
    useBudget({ REQUEST_DEADLINE_MS: '5000', DYNAMODB_REQUEST_TIMEOUT_MS: '300', DYNAMODB_MAX_ATTEMPTS: '1' });
    proxy.pause();
    try {
      for (const bearer of [user.token, apiKey]) {
        const { res, ms } = await timed(() => call('GET', '/api/agents', { bearer }));
        expect(res.status).toBe(503);
        expect(res.body.code).toBe('BACKEND_UNAVAILABLE');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        expect(ms).toBeLessThan(2000);
      }
    } finally {
      proxy.resume();
    }
    expect((await call('GET', '/api/agents', { bearer: user.token })).status).toBe(200);
  });
});
