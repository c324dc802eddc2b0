import { describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '#http/cookies';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '#http/request-guards';
import { call, testSession, uniqueIp } from '../helpers/api';
import { putTestAgent } from '../security/route-samples';
import { cookieValue, register, uniqueEmail } from './accounts-helpers';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('login CSRF (defect 7): JSON routes refuse other content types, sign-in refuses cross-site requests', () => {
  it('a JSON body sent as text/plain (what a cross-site form can send) is 415 and sets no session', async () => {
    const email = uniqueEmail('csrf');
    expect((await register(email)).status).toBe(201);
    const res = await call('POST', '/api/auth/callback/credentials', {
      rawBody: JSON.stringify({ email, password: 'correct horse battery' }),
      headers: { 'content-type': 'text/plain' },
      ip: uniqueIp(),
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', error: expect.any(String) });
    expect(cookieValue(res.cookies, SESSION_COOKIE)).toBeUndefined();
  });

  it('sign-in and sign-up from another origin are 403; the application origin and non-browser clients pass', async () => {
    const email = uniqueEmail('origin');
    const body = { email, password: 'correct horse battery' };
    const foreign = await call('POST', '/api/register', { body, headers: { origin: 'https://evil.example' }, ip: uniqueIp() });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('CROSS_SITE_REQUEST');
    expect(
      (await call('POST', '/api/register', { body, headers: { origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'same-origin' }, ip: uniqueIp() })).status,
    ).toBe(201);

    const crossSite = await call('POST', '/api/auth/callback/credentials', { body, headers: { 'sec-fetch-site': 'cross-site' }, ip: uniqueIp() });
    expect(crossSite.status).toBe(403);
    expect(cookieValue(crossSite.cookies, SESSION_COOKIE)).toBeUndefined();
    const wallet = await call('POST', '/api/auth/callback/wallet', {
      body: { message: 'x', signature: '0x00' },
      headers: { origin: 'https://evil.example' },
      ip: uniqueIp(),
    });
    expect(wallet.status).toBe(403);
    expect((await call('POST', '/api/auth/callback/credentials', { body, ip: uniqueIp() })).status).toBe(200);
  });

  it('an authenticated JSON route answers 415 to a form-encoded body', async () => {
    const session = await testSession();
    const res = await call('POST', '/api/keys', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, bearer: session.token });
    expect(res.status).toBe(415);
  });
});

describe('JSON depth limit (defect 8)', () => {
  it('a memory value nested thousands of levels deep is a clear 400, not a 500', async () => {
    const session = await testSession();
    const agentId = await putTestAgent(session.userId);
    const rawBody = `{"agentId":${JSON.stringify(agentId)},"key":"deep","memory":${nested(5000)}}`;
    const res = await call('POST', '/api/memory', { rawBody, bearer: session.token });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'JSON_TOO_DEEP' });
    const ok = await call('POST', '/api/memory', { body: { agentId, key: 'shallow', memory: JSON.parse(nested(10)) }, bearer: session.token });
    expect(ok.status, ok.text).toBe(200);
  });

  it('counts only brackets outside strings', () => {
    expect(jsonNestingExceeds(JSON.stringify({ text: '['.repeat(1000) }))).toBe(false);
    expect(jsonNestingExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestingExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonNestingExceeds(`{"a":"\\"[[","b":${nested(MAX_JSON_DEPTH + 1)}}`)).toBe(true);
  });
});
