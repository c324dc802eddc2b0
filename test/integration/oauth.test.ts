import { createHash, randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authenticate } from '#domain/auth/authenticate';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal } from '#data/tenant';
import { createUser, findUserIdByEmail, findUserIdByLogin, getUser } from '#data/users';
import { readOutbox } from '#adapters/email';
import { call, uniqueIp, type CallResult } from '../helpers/api';
import { register, sessionFrom, signIn as signInWithPassword } from './accounts-helpers';
import { captureEvents } from '../helpers/event-queue';
import { startFakeOAuthProvider, type FakeAccount, type FakeOAuthProvider } from '../helpers/fake-oauth-provider';

const APP = 'http://127.0.0.1:3000';
let codehost: FakeOAuthProvider;
let webid: FakeOAuthProvider;
let events: Awaited<ReturnType<typeof captureEvents>>;

const unset = (env: Record<string, string>) => Object.fromEntries(Object.keys(env).map((k) => [k, undefined]));

beforeAll(async () => {
  codehost = await startFakeOAuthProvider('codehost');
  webid = await startFakeOAuthProvider('webid');
});
afterAll(async () => {
  await codehost.close();
  await webid.close();
});
beforeEach(async () => {
  reloadConfig({ ...codehost.env, ...webid.env });
  events = await captureEvents();
});
afterEach(async () => {
  await events.stop();
  reloadConfig({ ...unset(codehost.env), ...unset(webid.env) });
});

const cookieValue = (cookies: string[], name: string) => {
  const c = cookies.find((x) => x.startsWith(`${name}=`));
  return c ? decodeURIComponent(c.slice(name.length + 1).split(';')[0]!) : undefined;
};

const account = (over: Partial<FakeAccount> = {}): FakeAccount => ({
  id: String(randomInt(1, 2 ** 47)),
  email: `oauth-${randomUUID().slice(0, 8)}@example.com`,
  emailVerified: true,
  name: 'Ada Provider',
  ...over,
});

async function start(provider: 'codehost' | 'webid', callbackUrl?: string) {
  const q = callbackUrl ? `?callbackUrl=${encodeURIComponent(callbackUrl)}` : '';
  const res = await call('GET', `/api/auth/oauth-${provider}${q}`, { ip: uniqueIp() });
  expect(res.status).toBe(302);
  return { res, location: res.headers.location!, state: cookieValue(res.cookies, 'oauth_state')! };
}

const callback = (redirect: URL, stateCookie?: string): Promise<CallResult> =>
  call('GET', redirect.pathname + redirect.search, { headers: stateCookie ? { cookie: `oauth_state=${stateCookie}` } : {}, ip: uniqueIp() });

/** Start, approve at the provider as `who`, come back: what a browser does. */
async function signIn(fake: FakeOAuthProvider, who: FakeAccount, callbackUrl?: string) {
  const s = await start(fake.dialect, callbackUrl);
  const { redirect } = await fake.approve(s.location, who);
  const res = await callback(redirect, s.state);
  return { ...s, redirect, res };
}

async function sessionUser(res: CallResult) {
  const token = cookieValue(res.cookies, 'session');
  expect(token, 'session cookie').toBeTruthy();
  return (await authenticate(undefined, token))!;
}

describe('OAuth start (code-hosting and web-identity)', () => {
  it.each(['codehost', 'webid'] as const)(
    '%s: 302 to the provider with state, PKCE S256 and the registered redirect URI; state kept server-side',
    async (provider) => {
      const fake = provider === 'codehost' ? codehost : webid;
      const { res, location, state } = await start(provider, '/dashboard');
      const url = new URL(location);
      expect(`${url.origin}${url.pathname}`).toBe(fake.env[provider === 'codehost' ? 'OAUTH_CODEHOST_AUTHORIZE_URL' : 'OAUTH_WEBID_AUTHORIZE_URL']);
      expect(url.searchParams.get('client_id')).toBe(fake.clientId);
      expect(url.searchParams.get('redirect_uri')).toBe(`${APP}/api/auth/callback/${provider}`);
      expect(url.searchParams.get('response_type')).toBe('code');
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('state')).toBe(state);
      expect(state.length).toBeGreaterThanOrEqual(32);
      const cookie = res.cookies.find((c) => c.startsWith('oauth_state='))!;
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);

      const stored = await getGlobal<{ codeVerifier: string; callbackUrl: string; expiresAt: number }>(keys.oauthState(state), true);
      expect(stored?.callbackUrl).toBe('/dashboard');
      expect(createHash('sha256').update(stored!.codeVerifier).digest('base64url')).toBe(url.searchParams.get('code_challenge'));
      expect(stored!.expiresAt).toBeGreaterThan(Date.now() / 1000);
      expect(stored!.expiresAt).toBeLessThanOrEqual(Date.now() / 1000 + 600 + 5);
    },
  );

  it('refuses an absolute or protocol-relative callbackUrl (no open redirect)', async () => {
    for (const bad of ['https://evil.example/x', '//evil.example/x']) {
      const res = await call('GET', `/api/auth/oauth-codehost?callbackUrl=${encodeURIComponent(bad)}`, { ip: uniqueIp() });
      expect(res.status).toBe(400);
    }
  });

  it.each(['codehost', 'webid'] as const)('%s: 503 OAUTH_NOT_CONFIGURED without a client id or secret', async (provider) => {
    const prefix = provider === 'codehost' ? 'OAUTH_CODEHOST' : 'OAUTH_WEBID';
    reloadConfig({ [`${prefix}_CLIENT_SECRET`]: undefined });
    const startRes = await call('GET', `/api/auth/oauth-${provider}`, { ip: uniqueIp() });
    expect(startRes.status).toBe(503);
    expect(startRes.body).toMatchObject({ code: 'OAUTH_NOT_CONFIGURED', error: expect.any(String) });
    const cb = await call('GET', `/api/auth/callback/${provider}?code=abc&state=xyz`, { ip: uniqueIp() });
    expect(cb.status).toBe(503);
    expect(cb.body.code).toBe('OAUTH_NOT_CONFIGURED');
  });
});

describe('OAuth callback', () => {
  it('codehost: a new user gets an account, the session cookies and a 302 to the callback path; user.created is emitted', async () => {
    const who = account();
    const { res } = await signIn(codehost, who, '/welcome?tab=1');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${APP}/welcome?tab=1`);
    expect(cookieValue(res.cookies, 'csrf_token')).toBeTruthy();
    expect(res.cookies.find((c) => c.startsWith('oauth_state='))).toMatch(/Max-Age=0/);

    const auth = await sessionUser(res);
    expect(auth.email).toBe(who.email);
    expect(await findUserIdByEmail(who.email)).toBe(auth.userId);
    expect(await findUserIdByLogin('codehost', who.id)).toBe(auth.userId);
    expect((await getUser(auth.userId))!.name).toBe('Ada Provider');

    // The code went to the token endpoint with the PKCE verifier and the client's secret in the form.
    const sent = codehost.tokenRequests.at(-1)!;
    expect(sent.grant_type).toBe('authorization_code');
    expect(sent.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(sent.client_secret).toBe(codehost.clientSecret);

    const created = (await events.drain()).filter((e) => e.type === 'user.created');
    expect(created).toHaveLength(1);
    expect(created[0]!.data).toMatchObject({ userId: auth.userId, email: who.email, method: 'codehost' });
  });

  it('signing in again with the same identity reaches the same account and creates nothing', async () => {
    const who = account();
    const first = await sessionUser((await signIn(codehost, who)).res);
    await events.drain();
    const second = await sessionUser((await signIn(codehost, who)).res);
    expect(second.userId).toBe(first.userId);
    expect((await events.drain()).filter((e) => e.type === 'user.created')).toHaveLength(0);
  });

  it.each(['codehost', 'webid'] as const)('%s: a verified email links to the existing account with that email instead of a duplicate', async (provider) => {
    const fake = provider === 'codehost' ? codehost : webid;
    const existing = await createUser({ email: `linked-${randomUUID().slice(0, 8)}@example.com`, name: 'Existing', emailVerified: true });
    const who = account({ email: existing.email.toUpperCase(), emailVerified: true });
    const { res } = await signIn(fake, who);
    expect(res.status).toBe(302);
    const auth = await sessionUser(res);
    expect(auth.userId).toBe(existing.userId);
    expect(await findUserIdByLogin(provider, who.id)).toBe(existing.userId);
    expect((await getUser(existing.userId))!.name).toBe('Existing');
    expect((await events.drain()).filter((e) => e.type === 'user.created')).toHaveLength(0);
    // The identity left a marker in the owner's partition, which is how account deletion finds it.
    expect(await getGlobal(keys.loginIdentity(provider, who.id), true)).toMatchObject({ userId: existing.userId });
  });

  it('defect 2: OAuth pre-hijack end to end: an account whose address nobody proved is never linked; a reset from the mailbox evicts its squatter, then OAuth links', async () => {
    const email = `prey-${randomUUID().slice(0, 8)}@example.com`;
    // The attacker registers the victim's address with a password first.
    expect((await register(email, 'attacker-password-1')).status).toBe(201);
    const attacker = await signInWithPassword(email, 'attacker-password-1');
    expect(attacker.status).toBe(200);
    const attackerSession = sessionFrom(attacker);
    const squatterId = attackerSession.userId;

    const victim = account({ email, emailVerified: true });
    const first = (await signIn(codehost, victim)).res;
    expect(first.status).toBe(302);
    expect(first.headers.location).toContain('/signin?error=EmailUnverified');
    expect(cookieValue(first.cookies, 'session')).toBeUndefined();
    expect(await findUserIdByLogin('codehost', victim.id)).toBeUndefined();

    // The victim owns the mailbox: a reset proves the address and throws the attacker out.
    await call('POST', '/api/auth/forgot-password', { body: { email }, ip: uniqueIp() });
    const mails = await readOutbox(email);
    const token = new URL(/(http\S+reset-password\?token=\S+)/.exec(mails.at(-1)!.text)![1]!).searchParams.get('token')!;
    expect((await call('POST', '/api/auth/reset-password', { body: { token, password: 'victim-new-password' }, ip: uniqueIp() })).status).toBe(200);
    expect((await call('GET', '/api/settings', { session: attackerSession })).status).toBe(401);
    expect((await signInWithPassword(email, 'attacker-password-1')).status).toBe(401);

    const second = (await signIn(codehost, victim)).res;
    expect(second.status).toBe(302);
    expect((await sessionUser(second)).userId).toBe(squatterId);
    expect(await findUserIdByLogin('codehost', victim.id)).toBe(squatterId);
  });

  it.each(['codehost', 'webid'] as const)('%s: an unverified email is never linked; the new account gets a derived address', async (provider) => {
    const fake = provider === 'codehost' ? codehost : webid;
    const victim = await createUser({ email: `victim-${randomUUID().slice(0, 8)}@example.com` });
    const who = account({ email: victim.email, emailVerified: false });
    const auth = await sessionUser((await signIn(fake, who)).res);
    expect(auth.userId).not.toBe(victim.userId);
    expect(auth.email).toBe(`${provider}-${who.id}@oauth.local`);
    expect(await findUserIdByEmail(victim.email)).toBe(victim.userId);
  });

  it('webid (OpenID Connect): the ID token and userinfo sign the user in', async () => {
    const who = account();
    const { res } = await signIn(webid, who, '/home');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${APP}/home`);
    const auth = await sessionUser(res);
    expect(auth.email).toBe(who.email);
    expect(await findUserIdByLogin('webid', who.id)).toBe(auth.userId);
    // client_secret_basic: the secret is in the Authorization header, not the form.
    expect(webid.tokenRequests.at(-1)!.client_secret).toBeUndefined();
  });

  it('a replayed state is refused: 400 OAUTH_STATE_INVALID, no session', async () => {
    const who = account();
    const { redirect, state, res } = await signIn(codehost, who);
    expect(res.status).toBe(302);
    const again = await callback(redirect, state);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('OAUTH_STATE_INVALID');
    expect(cookieValue(again.cookies, 'session')).toBeUndefined();
  });

  it("a state that is unknown, or not the one in this browser's cookie, or without the cookie, is refused", async () => {
    const s = await start('codehost');
    const { redirect } = await codehost.approve(s.location, account());
    // A callback lured onto another browser (login CSRF): no cookie, or that browser's own cookie.
    expect((await callback(redirect)).status).toBe(400);
    const other = await start('codehost');
    expect((await callback(redirect, other.state)).status).toBe(400);
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'f'.repeat(43));
    expect((await callback(forged, 'f'.repeat(43))).status).toBe(400);
    // A missing state is a validation error.
    const noState = await call('GET', '/api/auth/callback/codehost?code=abc', { ip: uniqueIp() });
    expect(noState.status).toBe(400);
  });

  it('the state of one provider is refused at the other', async () => {
    const s = await start('codehost');
    const { code } = await codehost.approve(s.location, account());
    const res = await call('GET', `/api/auth/callback/webid?code=${code}&state=${s.state}`, { headers: { cookie: `oauth_state=${s.state}` }, ip: uniqueIp() });
    expect(res.status).toBe(400);
  });

  it('a declined sign-in goes back to the sign-in page without a session, and consumes the state', async () => {
    const s = await start('webid');
    const redirect = await webid.decline(s.location);
    const res = await callback(redirect, s.state);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${APP}/signin?error=OAuthCallback`);
    expect(cookieValue(res.cookies, 'session')).toBeUndefined();
    expect(await getGlobal(keys.oauthState(s.state), true)).toBeUndefined();
  });

  it('a code the provider refuses answers 502 OAUTH_PROVIDER_ERROR, never a 500', async () => {
    const s = await start('codehost');
    const { redirect } = await codehost.approve(s.location, account());
    redirect.searchParams.set('code', 'not-a-code-the-provider-issued');
    const res = await callback(redirect, s.state);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('OAUTH_PROVIDER_ERROR');
  });

  it('a provider that is down answers 502, never a 500', async () => {
    const s = await start('codehost');
    const { redirect } = await codehost.approve(s.location, account());
    reloadConfig({ OAUTH_CODEHOST_TOKEN_URL: 'http://127.0.0.1:9/unreachable' });
    const res = await callback(redirect, s.state);
    expect(res.status).toBe(502);
  });
});
