import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '#platform/config';
import { call, uniqueIp } from '../helpers/api';
import { startFakeBotCheck } from '../helpers/fake-bot-check';
import { uniqueEmail } from './accounts-helpers';

const SECRET = 'bot-check-test-secret';
let fake: Awaited<ReturnType<typeof startFakeBotCheck>>;

const enable = (opts: { url?: string; secret?: string | null } = {}) =>
  reloadConfig({
    BOT_CHECK_VERIFY_URL: opts.url ?? fake.url,
    BOT_CHECK_SECRET: opts.secret === null ? undefined : (opts.secret ?? SECRET),
    FORGOT_PASSWORD_MIN_MS: '0',
  });

beforeAll(async () => {
  fake = await startFakeBotCheck({ secret: SECRET, validTokens: ['human-token'] });
});
afterEach(() => {
  reloadConfig({ BOT_CHECK_VERIFY_URL: undefined, BOT_CHECK_SECRET: undefined, FORGOT_PASSWORD_MIN_MS: undefined });
});
afterAll(async () => {
  await fake.close();
});

const signUpWith = (headers: Record<string, string>, ip = uniqueIp()) =>
  call('POST', '/api/register', { body: { email: uniqueEmail('bot'), password: 'correct horse battery' }, headers, ip });

describe('bot detection on sign-up and forgot-password', () => {
  it('is off when no verify URL is configured (the local default)', async () => {
    expect((await signUpWith({})).status).toBe(201);
  });

  it('refuses a sign-up without a token, with a refused token, and lets a verified one through', async () => {
    enable();
    const none = await signUpWith({});
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ error: 'bot check failed', code: 'BOT_DETECTED' });
    const bad = await signUpWith({ 'x-bot-check-token': 'scripted' });
    expect(bad.status).toBe(403);
    expect(bad.body.code).toBe('BOT_DETECTED');
    const ip = uniqueIp();
    const good = await signUpWith({ 'x-bot-check-token': 'human-token' }, ip);
    expect(good.status, good.text).toBe(201);
    // The verify call carries the secret, the token and the address API Gateway saw, as a form.
    const last = fake.requests.at(-1)!;
    expect(last).toMatchObject({ secret: SECRET, response: 'human-token', remoteip: ip });
    expect(last.contentType).toContain('application/x-www-form-urlencoded');
  });

  it('refuses forgot-password without a verified token', async () => {
    enable();
    const res = await call('POST', '/api/auth/forgot-password', { body: { email: uniqueEmail() }, ip: uniqueIp() });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('BOT_DETECTED');
    const ok = await call('POST', '/api/auth/forgot-password', {
      body: { email: uniqueEmail() },
      headers: { 'x-bot-check-token': 'human-token' },
      ip: uniqueIp(),
    });
    expect(ok.status).toBe(200);
  });

  it('answers 403 when the secret is wrong (the service refuses every token)', async () => {
    enable({ secret: 'not-the-secret' });
    expect((await signUpWith({ 'x-bot-check-token': 'human-token' })).status).toBe(403);
  });

  it('fails closed with 503, not 500, when the verify service cannot be reached or the secret is missing', async () => {
    enable({ url: 'http://127.0.0.1:9/siteverify' });
    const down = await signUpWith({ 'x-bot-check-token': 'human-token' });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('BOT_CHECK_UNAVAILABLE');
    enable({ secret: null });
    expect((await signUpWith({ 'x-bot-check-token': 'human-token' })).status).toBe(503);
  });
});
