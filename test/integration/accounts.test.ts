import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { creditLedger } from '#domain/billing/credits';
import { config, reloadConfig, referralConfig } from '#platform/config';
import * as keys from '#data/keys';
import { getGlobal, transact, tx } from '#data/tenant';
import { getUser } from '#data/users';
import { CSRF_COOKIE, SESSION_COOKIE } from '#http/cookies';
import { call, uniqueIp } from '../helpers/api';
import { startFakeBotCheck } from '../helpers/fake-bot-check';
import { cookieValue, register, sessionFrom, signIn, signUp, uniqueEmail, verificationTokenFor, verifyEmailOf } from './accounts-helpers';

const outbox = mkdtempSync(path.join(tmpdir(), 'accounts-outbox-'));
const baseline = {
  OUTBOX_DIR: outbox,
  FORGOT_PASSWORD_MIN_MS: '0',
  RATE_LIMITS: undefined,
  REFERRAL_CREDITS: undefined,
  BOT_CHECK_VERIFY_URL: undefined,
  BOT_CHECK_SECRET: undefined,
  SIGN_IN_CAPPED_DELAY_MS: undefined,
  EVENTS_QUEUE_URL: process.env.EVENTS_QUEUE_URL,
};

beforeAll(() => {
  reloadConfig(baseline);
});
afterEach(() => {
  reloadConfig(baseline);
});
afterAll(() => {
  reloadConfig({ OUTBOX_DIR: undefined, FORGOT_PASSWORD_MIN_MS: undefined });
});

async function ledgerSum(userId: string) {
  const { entries } = await creditLedger(userId, { limit: 100 });
  return { sum: entries.reduce((s, e) => s + e.delta, 0), entries };
}

async function resetLinkFor(email: string): Promise<string> {
  const mails = await readOutbox(email);
  const link = /(http\S+reset-password\?token=\S+)/.exec(mails.at(-1)?.text ?? '')?.[1];
  if (!link) throw new Error(`no reset link for ${email}`);
  return new URL(link).searchParams.get('token')!;
}

describe('addresses the platform derives cannot be registered', () => {
  it("a password account under a wallet's derived email would capture its sign-ins: 400 EMAIL_RESERVED", async () => {
    for (const email of ['0x2222222222222222222222222222222222222222@wallet.local', 'codehost-99@oauth.local', 'FID-5@Social.Local']) {
      const res = await register(email);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EMAIL_RESERVED');
      expect(await getGlobal(keys.emailIndex(email), true)).toBeUndefined();
    }
  });
});

describe('POST /api/register', () => {
  it('creates the account, names it after the email by default and stores an argon2id hash with OWASP parameters', async () => {
    const email = uniqueEmail('Ada').replace('ada', 'ADA');
    const res = await register(email, 'correct horse battery');
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['email', 'id', 'name']);
    expect(res.body.email).toBe(email.toLowerCase());
    expect(res.body.name).toBe(email.toLowerCase());
    const user = await getUser(res.body.id, true);
    expect(user?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(JSON.stringify(user)).not.toContain('correct horse battery');
    expect(res.text).not.toContain('argon2');
  });

  it('keeps a given name', async () => {
    const res = await register(uniqueEmail(), 'correct horse battery', { name: 'Grace Hopper' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Grace Hopper');
  });

  it('refuses a 7-character password and accepts an 8-character one', async () => {
    const email = uniqueEmail();
    const short = await register(email, '1234567');
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('VALIDATION_ERROR');
    expect((await register(email, '12345678')).status).toBe(201);
  });

  it('refuses a missing email, a bad email format and a missing password with 400', async () => {
    for (const body of [{ password: 'correct horse battery' }, { email: 'not-an-email', password: 'correct horse battery' }, { email: uniqueEmail() }]) {
      const res = await call('POST', '/api/register', { body, ip: uniqueIp() });
      expect(res.status).toBe(400);
    }
  });

  it('gives exactly one account and 19 409s for 20 concurrent sign-ups of one email (in any letter case)', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => register(i % 2 ? email.toUpperCase() : email, `password-${i}-long`)));
    const statuses = results.map((r) => r.status).sort();
    expect(
      statuses.filter((s) => s === 201),
      results.map((r) => r.text).join('\n'),
    ).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body).toEqual({ error: 'an account with this email already exists', code: 'USER_EXISTS' });
    const winner = results.find((r) => r.status === 201)!;
    expect((await getGlobal<{ userId: string }>(keys.emailIndex(email), true))?.userId).toBe(winner.body.id);
  });

  it('credits the new user and the referrer once each, and each balance equals its ledger', async () => {
    reloadConfig({ ...baseline, REFERRAL_CREDITS: '150' });
    const referrer = await signUp();
    const code = (await getUser(referrer.userId, true))!.referralCode;
    const referredEmail = uniqueEmail('referred');
    const res = await register(referredEmail, 'correct horse battery', { referralCode: code.toUpperCase() });
    expect(res.status, res.text).toBe(201);
    // Nothing is paid for an address nobody proved (defect 10): throwaway sign-ups earn nothing.
    expect((await getUser(res.body.id, true))?.credits).toBe(0);
    expect((await getUser(referrer.userId, true))?.credits).toBe(0);
    await verifyEmailOf(referredEmail);
    // A second use of the link pays nothing more.
    expect((await call('POST', '/api/auth/verify-email', { body: { token: 'used-or-unknown' }, ip: uniqueIp() })).status).toBe(400);

    const newUser = await getUser(res.body.id, true);
    expect(newUser?.credits).toBe(150);
    expect(newUser?.referredBy).toBe(referrer.userId);
    const own = await ledgerSum(res.body.id);
    expect(own.entries).toHaveLength(1);
    expect(own.sum).toBe(150);

    const ref = await ledgerSum(referrer.userId);
    expect((await getUser(referrer.userId, true))?.credits).toBe(150);
    expect(ref.entries.filter((e) => e.reason === 'referral')).toHaveLength(1);
    expect(ref.sum).toBe(150);
  });

  it('credits a referrer once per new user when many sign up with the code at the same time', async () => {
    const referrer = await signUp();
    const code = (await getUser(referrer.userId, true))!.referralCode;
    const emails = Array.from({ length: 8 }, () => uniqueEmail('crowd'));
    const results = await Promise.all(emails.map((email) => register(email, 'correct horse battery', { referralCode: code })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const tokens = await Promise.all(emails.map(verificationTokenFor));
    await Promise.all(tokens.map((token) => call('POST', '/api/auth/verify-email', { body: { token }, ip: uniqueIp() })));
    const bonus = referralConfig().credits;
    const ref = await ledgerSum(referrer.userId);
    expect(ref.entries).toHaveLength(8);
    expect((await getUser(referrer.userId, true))?.credits).toBe(8 * bonus);
    expect(ref.sum).toBe(8 * bonus);
  });

  it('refuses an unknown or malformed referral code with 400 and creates no account', async () => {
    const email = uniqueEmail();
    const unknown = await register(email, 'correct horse battery', { referralCode: 'NOPE-NOT-A-CODE' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('INVALID_REFERRAL_CODE');
    const malformed = await register(email, 'correct horse battery', { referralCode: 'bad code!' });
    expect(malformed.status).toBe(400);
    expect(await getGlobal(keys.emailIndex(email), true)).toBeUndefined();
    expect((await register(email)).status).toBe(201);
  });

  it('limits sign-ups per client address with 429 and Retry-After', async () => {
    reloadConfig({ ...baseline, RATE_LIMITS: JSON.stringify({ register: { limit: 2 } }) });
    const ip = uniqueIp();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await call('POST', '/api/register', { body: { email: uniqueEmail(), password: 'correct horse battery' }, ip }));
    expect(statuses.map((r) => r.status)).toEqual([201, 201, 429]);
    expect(Number(statuses[2]!.headers['retry-after'])).toBeGreaterThan(0);
    expect((await call('POST', '/api/register', { body: { email: uniqueEmail(), password: 'correct horse battery' }, ip: uniqueIp() })).status).toBe(201);
  });
});

describe('POST /api/auth/callback/credentials', () => {
  it('answers the public profile and sets an HttpOnly session cookie holding a 7-day JWT, plus the CSRF cookie', async () => {
    const email = uniqueEmail();
    await register(email);
    const res = await signIn(email.toUpperCase());
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ email, name: email, plan: 'none', credits: 0 });
    const sessionLine = res.cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(sessionLine).toMatch(/HttpOnly/);
    expect(sessionLine).toMatch(/SameSite=Lax/);
    expect(sessionLine).toMatch(/Max-Age=604800/);
    const claims = decodeJwt(cookieValue(res.cookies, SESSION_COOKIE)!);
    expect(claims.exp! - claims.iat!).toBe(604800);
    expect(claims.sub).toBe(res.body.user.id);
    expect(cookieValue(res.cookies, CSRF_COOKIE)).toBeTruthy();

    const session = sessionFrom(res);
    expect((await call('GET', '/api/settings', { session })).status).toBe(200);
    expect((await call('GET', '/api/settings', { bearer: session.token })).status).toBe(200);
  });

  it('gives the same 401 body for a wrong password and for an unknown email', async () => {
    const email = uniqueEmail();
    await register(email);
    const wrong = await signIn(email, 'not the password');
    const unknown = await signIn(uniqueEmail('nobody'), 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'Invalid email or password', code: 'INVALID_CREDENTIALS' });
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.cookies).toEqual([]);
  });
});

describe('sign-in limiting slows guessing without locking the owner out', () => {
  const limits = (address: number, account: number, extra: Record<string, string | undefined> = {}) =>
    reloadConfig({ ...baseline, RATE_LIMITS: JSON.stringify({ signInAddress: { limit: address }, signInAccount: { limit: account } }), ...extra });
  const signInWithToken = (email: string, password: string, ip: string, token?: string) =>
    call('POST', '/api/auth/callback/credentials', { body: { email, password }, ip, headers: token ? { 'x-bot-check-token': token } : {} });
  let botCheck: Awaited<ReturnType<typeof startFakeBotCheck>>;
  beforeAll(async () => {
    botCheck = await startFakeBotCheck({ secret: 'sign-in-bot-secret', validTokens: ['human-token'] });
  });
  afterAll(async () => {
    await botCheck.close();
  });

  it("the owner signs in from a known address after an attacker's many failures from other addresses", async () => {
    limits(2, 3, { SIGN_IN_CAPPED_DELAY_MS: '0' });
    const email = uniqueEmail();
    await register(email);
    const home = uniqueIp();
    expect((await signIn(email, 'correct horse battery', home)).status).toBe(200);
    for (let i = 0; i < 6; i++) expect((await signIn(email, `guess-${i}`, uniqueIp())).status).toBe(401);
    const owner = await signIn(email, 'correct horse battery', home);
    expect(owner.status, owner.text).toBe(200);
    expect(owner.body.user.email).toBe(email);
  });

  it('past the account cap an unknown address must pass the bot check, and passes with a valid token', async () => {
    const email = uniqueEmail();
    await register(email);
    const other = uniqueEmail();
    await register(other);
    limits(3, 4, { BOT_CHECK_VERIFY_URL: botCheck.url, BOT_CHECK_SECRET: 'sign-in-bot-secret' });
    for (let i = 0; i < 4; i++) expect((await signIn(email, `guess-${i}`, uniqueIp())).status).toBe(401);
    const stranger = uniqueIp();
    const challenged = await signIn(email, 'correct horse battery', stranger);
    expect(challenged.status).toBe(403);
    expect(challenged.body.code).toBe('BOT_CHECK_REQUIRED');
    expect(challenged.cookies).toEqual([]);
    const refused = await signInWithToken(email, 'correct horse battery', stranger, 'scripted');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('BOT_DETECTED');
    const human = await signInWithToken(email, 'correct horse battery', stranger, 'human-token');
    expect(human.status, human.text).toBe(200);
    expect(botCheck.requests.at(-1)).toMatchObject({ response: 'human-token', remoteip: stranger });
    // The same person guessing wrong with a valid token still gets the ordinary 401, and another account is not affected.
    expect((await signInWithToken(email, 'wrong password', uniqueIp(), 'human-token')).status).toBe(401);
    expect((await signIn(other, 'correct horse battery', uniqueIp())).status).toBe(200);
  });

  it('past the account cap with bot detection off, an unknown address waits instead of being refused', async () => {
    limits(3, 2, { SIGN_IN_CAPPED_DELAY_MS: '1200' });
    const email = uniqueEmail();
    await register(email);
    for (let i = 0; i < 2; i++) expect((await signIn(email, `guess-${i}`, uniqueIp())).status).toBe(401);
    const started = Date.now();
    const slowed = await signIn(email, 'correct horse battery', uniqueIp());
    expect(slowed.status, slowed.text).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
  });

  it('limits failures per account and address with 429 before any password check; other addresses and accounts are unaffected', async () => {
    limits(2, 100);
    const email = uniqueEmail();
    await register(email);
    const ip = uniqueIp();
    expect((await signIn(email, 'guess-1', ip)).status).toBe(401);
    expect((await signIn(email, 'guess-2', ip)).status).toBe(401);
    const blocked = await signIn(email, 'correct horse battery', ip);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signIn(email, 'correct horse battery', uniqueIp())).status).toBe(200);
    const other = uniqueEmail();
    await register(other);
    expect((await signIn(other, 'correct horse battery', ip)).status).toBe(200);
  });

  it("only failures count, and a success resets the caller's own counter", async () => {
    limits(3, 100);
    const email = uniqueEmail();
    await register(email);
    const ip = uniqueIp();
    for (let i = 0; i < 4; i++) expect((await signIn(email, 'correct horse battery', ip)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await signIn(email, `guess-${i}`, ip)).status).toBe(401);
    expect((await signIn(email, 'correct horse battery', ip)).status).toBe(200);
    // Without the reset these would be the third and fourth failures in the window: the fourth attempt would answer 429.
    for (let i = 0; i < 2; i++) expect((await signIn(email, `again-${i}`, ip)).status).toBe(401);
    expect((await signIn(email, 'correct horse battery', ip)).status).toBe(200);
  });

  it('limits attempts per client address whatever the account (route scope signIn)', async () => {
    reloadConfig({ ...baseline, RATE_LIMITS: JSON.stringify({ signIn: { limit: 2 } }) });
    const ip = uniqueIp();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await signIn(uniqueEmail(), 'whatever-password', ip)).status);
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('sign-out and CSRF token', () => {
  it('sign-out clears both cookies', async () => {
    const user = await signUp();
    const res = await call('POST', '/api/auth/signout', { session: user });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    for (const name of [SESSION_COOKIE, CSRF_COOKIE]) expect(res.cookies.find((c) => c.startsWith(`${name}=;`))).toMatch(/Max-Age=0/);
    expect((await call('POST', '/api/auth/signout', {})).status).toBe(200);
  });

  it('sign-out with everywhere=true revokes every session of the account', async () => {
    const user = await signUp();
    const other = sessionFrom(await signIn(user.email, user.password));
    expect((await call('POST', '/api/auth/signout?everywhere=true', { session: user })).status).toBe(200);
    expect((await call('GET', '/api/settings', { session: other })).status).toBe(401);
    expect((await call('GET', '/api/settings', { bearer: user.token })).status).toBe(401);
  });

  it('sign-out by cookie needs the CSRF token', async () => {
    const user = await signUp();
    const res = await call('POST', '/api/auth/signout', { session: user, csrf: false });
    expect(res.status).toBe(403);
  });

  it("GET /api/auth/csrf answers and sets the token bound to the caller's session", async () => {
    const user = await signUp();
    const res = await call('GET', '/api/auth/csrf', { bearer: user.token });
    expect(res.status).toBe(200);
    expect(res.body.csrfToken).toBe(user.csrf);
    expect(cookieValue(res.cookies, CSRF_COOKIE)).toBe(user.csrf);
    const other = await signUp();
    expect(res.body.csrfToken).not.toBe(other.csrf);
    expect((await call('GET', '/api/auth/csrf', {})).status).toBe(401);
  });
});

describe('forgot and reset password', () => {
  it('answers known and unknown emails identically and mails a single link only to the known one', async () => {
    const user = await signUp();
    const unknownEmail = uniqueEmail('ghost');
    const known = await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const unknown = await call('POST', '/api/auth/forgot-password', { body: { email: unknownEmail }, ip: uniqueIp() });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    expect(await readOutbox(unknownEmail)).toEqual([]);
    const mails = (await readOutbox(user.email)).filter((m) => m.subject !== 'Confirm your email address');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Reset your password');
    const token = await resetLinkFor(user.email);
    expect(mails[0]!.text).toContain(`${config().appUrl}/reset-password?token=`);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the SHA-256 of the token is stored.
    const stored = await getGlobal<Record<string, unknown>>(keys.resetToken(createHash('sha256').update(token).digest('hex')), true);
    expect(stored?.userId).toBe(user.userId);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(Number(stored?.expiresAt) - Date.now() / 1000).toBeGreaterThan(29 * 60);
    expect(Number(stored?.expiresAt) - Date.now() / 1000).toBeLessThanOrEqual(30 * 60);
  });

  it('refuses a 5-character password, accepts a 6-character one, signs out every session and refuses reuse', async () => {
    const user = await signUp();
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const token = await resetLinkFor(user.email);
    const short = await call('POST', '/api/auth/reset-password', { body: { token, password: '12345' }, ip: uniqueIp() });
    expect(short.status).toBe(400);
    const ok = await call('POST', '/api/auth/reset-password', { body: { token, password: '123456' }, ip: uniqueIp() });
    expect(ok.status, ok.text).toBe(200);
    expect(typeof ok.body.message).toBe('string');
    expect((await call('GET', '/api/settings', { session: user })).status).toBe(401);
    expect((await signIn(user.email, '123456')).status).toBe(200);
    expect((await signIn(user.email, user.password)).status).toBe(401);
    const reuse = await call('POST', '/api/auth/reset-password', { body: { token, password: 'another-one' }, ip: uniqueIp() });
    expect(reuse.status).toBe(400);
    expect(reuse.body.code).toBe('INVALID_TOKEN');
  });

  it('lets exactly one of many concurrent uses of a token through', async () => {
    const user = await signUp();
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const token = await resetLinkFor(user.email);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call('POST', '/api/auth/reset-password', { body: { token, password: `parallel-${i}` }, ip: uniqueIp() })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(9);
  });

  it('refuses an expired token, an unknown token and a token superseded by a newer request', async () => {
    const user = await signUp();
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const first = await resetLinkFor(user.email);
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const second = await resetLinkFor(user.email);
    expect(second).not.toBe(first);
    const superseded = await call('POST', '/api/auth/reset-password', { body: { token: first, password: 'new-password' }, ip: uniqueIp() });
    expect(superseded.status).toBe(400);

    const unknown = await call('POST', '/api/auth/reset-password', { body: { token: 'A'.repeat(43), password: 'new-password' }, ip: uniqueIp() });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('INVALID_TOKEN');

    // Past its 30 minutes (DynamoDB's TTL sweep is late, so the stored expiry is what counts).
    const hash = createHash('sha256').update(second).digest('hex');
    await transact([tx.update(keys.resetToken(hash), { expression: 'SET expiresAt = :past', values: { ':past': Math.floor(Date.now() / 1000) - 1 } })]);
    const expired = await call('POST', '/api/auth/reset-password', { body: { token: second, password: 'new-password' }, ip: uniqueIp() });
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe('INVALID_TOKEN');
    expect((await signIn(user.email, user.password)).status).toBe(200);
  });

  it('limits forgot-password and reset-password per client address', async () => {
    reloadConfig({ ...baseline, RATE_LIMITS: JSON.stringify({ forgotPassword: { limit: 1 }, resetPassword: { limit: 1 } }) });
    const ip = uniqueIp();
    expect((await call('POST', '/api/auth/forgot-password', { body: { email: uniqueEmail() }, ip })).status).toBe(200);
    expect((await call('POST', '/api/auth/forgot-password', { body: { email: uniqueEmail() }, ip })).status).toBe(429);
    expect((await call('POST', '/api/auth/reset-password', { body: { token: 'x'.repeat(43), password: 'whatever' }, ip })).status).toBe(400);
    expect((await call('POST', '/api/auth/reset-password', { body: { token: 'x'.repeat(43), password: 'whatever' }, ip })).status).toBe(429);
  });
});

describe('events from sign-up never block it', () => {
  it('still signs up when the events queue cannot be reached', async () => {
    reloadConfig({ ...baseline, EVENTS_QUEUE_URL: `${process.env.EVENTS_QUEUE_URL}-does-not-exist` });
    expect((await register(uniqueEmail())).status).toBe(201);
  });
});
