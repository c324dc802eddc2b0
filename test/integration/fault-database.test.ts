import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config, reloadConfig } from '#platform/config';
import { resetDbClient } from '#data/client';
import { accountSession, call, type TestSession } from '../helpers/api';
import { restoreDatabase, startPausableProxy } from '../helpers/pausable-proxy';

/**
 * A database that stops answering (paused, as a stalled or SIGSTOPped
 * DynamoDB Local is) must give a bounded 503 with Retry-After, not hold requests until it comes
 * back, and health must say so; once it answers again, so does the platform.
 */
const BUDGET = { DYNAMODB_CONNECT_TIMEOUT_MS: '300', DYNAMODB_REQUEST_TIMEOUT_MS: '400', DYNAMODB_MAX_ATTEMPTS: '2', HEALTH_PROBE_CACHE_MS: '0' };
let proxy: Awaited<ReturnType<typeof startPausableProxy>>;
let realEndpoint: string;
let user: TestSession;

beforeAll(async () => {
  realEndpoint = config().dynamoEndpoint!;
  user = await accountSession();
  proxy = await startPausableProxy(new URL(realEndpoint));
  reloadConfig({ ...BUDGET, DYNAMODB_ENDPOINT: proxy.url });
  resetDbClient();
});

afterAll(async () => {
  restoreDatabase(realEndpoint, ['HEALTH_PROBE_CACHE_MS']);
  await proxy.close();
});

describe('a paused database', () => {
  it('answers 503 BACKEND_UNAVAILABLE within the budget, health says unhealthy, and both recover on resume', async () => {
    expect((await call('GET', '/api/agents', { bearer: user.token })).status).toBe(200);
    expect((await call('GET', '/api/health')).status).toBe(200);

    proxy.pause();
    const started = Date.now();
    const stalled = await call('GET', '/api/agents', { bearer: user.token });
    const elapsed = Date.now() - started;
    expect(stalled.status).toBe(503);
    expect(stalled.body).toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(Number(stalled.headers['retry-after'])).toBeGreaterThan(0);
    // Two attempts of BUDGET's request timeout (plus the SDK's backoff between them) for the rate-limit write, which fails first.
    expect(elapsed).toBeLessThan(3000);
    const health = await call('GET', '/api/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'error', health: 'unhealthy' });
    expect(typeof health.body.timestamp).toBe('string');

    proxy.resume();
    expect((await call('GET', '/api/agents', { bearer: user.token })).status).toBe(200);
    expect((await call('GET', '/api/health')).status).toBe(200);
  });

  it('a write that timed out is answered 503 too, never 500', async () => {
    proxy.pause();
    const res = await call('POST', '/api/keys', { bearer: user.token, body: { name: 'during-outage' } });
    proxy.resume();
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('BACKEND_UNAVAILABLE');
  });
});
