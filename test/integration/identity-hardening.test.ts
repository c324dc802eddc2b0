import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { reloadConfig } from '#platform/config';
import { gatewayToken, isGatewayToken } from '#data/instances';
import { createUserWebhook } from '#data/user-webhooks';
import { getUser } from '#data/users';
import { call, uniqueIp, type TestSession } from '../helpers/api';
import { register, sessionFrom, signIn, signUp, uniqueEmail, verifyEmailOf } from './accounts-helpers';

const outbox = mkdtempSync(path.join(tmpdir(), 'identity-outbox-'));

beforeAll(() => {
  reloadConfig({ OUTBOX_DIR: outbox, FORGOT_PASSWORD_MIN_MS: '0', REFERRAL_CAP: '2', ADMIN_EMAILS: 'admin@example.com,ops-lead@example.com' });
});
afterAll(() => {
  reloadConfig({ OUTBOX_DIR: undefined, FORGOT_PASSWORD_MIN_MS: undefined, REFERRAL_CAP: undefined, ADMIN_EMAILS: 'admin@example.com' });
});

/** Another tenant's metrics: 404 for a user, 200 for an admin (the rights defect 1 was about). */
const foreignMetrics = async (bearer: string) => (await call('GET', '/api/metrics/u_some_other_tenant/performance', { bearer })).status;
const isAdmin = (session: TestSession) => foreignMetrics(session.token);
const newKey = async (session: TestSession) => (await call('POST', '/api/keys', { bearer: session.token, body: { name: 'ci' } })).body.key as string;

describe('defect 1: an address in the admin list gives no rights until it is proven', () => {
  it('registering the admin address first gives a plain account; the emailed link turns the rights on', async () => {
    const squatter = await signUp({ email: 'ops-lead@example.com' });
    const adminRoute = await call('GET', '/api/settings', { bearer: squatter.token });
    expect(adminRoute.body.emailVerified).toBe(false);
    expect(await isAdmin(squatter)).toBe(404);
    const mails = await readOutbox('ops-lead@example.com');
    expect(mails.at(-1)!.text).toContain('/verify-email?token=');
    await verifyEmailOf('ops-lead@example.com');
    // The same session gets the rights at once: they are judged by the account as it is now.
    expect(await isAdmin(squatter)).toBe(200);
  });
});

describe('defect 3: API keys and the instance are judged by the account as it is now', () => {
  it('a key made under an admin address loses admin rights when the account moves to another address', async () => {
    reloadConfig({ ADMIN_EMAILS: 'admin@example.com,ops-lead@example.com,boss-x@example.com' });
    const email = 'boss-x@example.com';
    const admin = await signUp({ email });
    await verifyEmailOf(email);
    const key = await newKey(admin);
    expect(await foreignMetrics(key)).toBe(200);

    const moved = uniqueEmail('ex-boss');
    expect((await call('POST', '/api/settings', { bearer: admin.token, body: { email: moved, currentPassword: admin.password } })).status).toBe(200);
    await verifyEmailOf(moved);
    const keyed = await call('GET', '/api/settings', { bearer: key });
    expect(keyed.body.email).toBe(moved);
    expect(await foreignMetrics(key)).toBe(404);
  });
});

describe('defect 4: recovery evicts the intruder', () => {
  it('a password reset revokes every session and API key, rotates the gateway token and emails what was revoked', async () => {
    const user = await signUp();
    const key = await newKey(user);
    // What an intruder leaves behind that acts without a sign-in.
    const { endpoint: planted } = await createUserWebhook(user.userId, 'https://collector.example.com/hook?token=t0ps3cret', ['instance.stopped'], 10);
    const oldToken = await gatewayToken(user.userId);
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const link = /(http\S+reset-password\?token=\S+)/.exec((await readOutbox(user.email)).at(-1)!.text)![1]!;
    const reset = await call('POST', '/api/auth/reset-password', {
      body: { token: new URL(link).searchParams.get('token'), password: 'brand-new-password' },
      ip: uniqueIp(),
    });
    expect(reset.status).toBe(200);

    expect((await call('GET', '/api/settings', { bearer: user.token })).status).toBe(401);
    expect((await call('GET', '/api/settings', { bearer: key })).status).toBe(401);
    expect(await isGatewayToken(user.userId, oldToken)).toBe(false);
    const newToken = await gatewayToken(user.userId);
    expect(newToken).not.toBe(oldToken);
    const notice = (await readOutbox(user.email)).at(-1)!;
    expect(notice.subject).toBe('Access to your account was revoked');
    expect(notice.text).toContain('1 API key');
    expect(notice.text).toContain('gateway token');
    expect(notice.text).toContain(`Still set up on your account`);
    expect(notice.text).toContain(`- webhook endpoint ${planted.id} (collector.example.com)`);
    expect(notice.text).not.toContain('t0ps3cret');
    // A reset link reached the mailbox: the address is proven.
    expect((await getUser(user.userId, true))?.emailVerified).toBe(true);
  });

  it('a password change rotates the gateway token and revokes API keys when asked; sign-out everywhere too', async () => {
    const user = await signUp();
    const keep = await newKey(user);
    const oldToken = await gatewayToken(user.userId);
    const changed = await call('POST', '/api/settings/password', {
      bearer: user.token,
      body: { currentPassword: user.password, newPassword: 'second-password-9' },
    });
    expect(changed.status).toBe(200);
    expect(await isGatewayToken(user.userId, oldToken)).toBe(false);
    expect((await call('GET', '/api/settings', { bearer: keep })).status).toBe(200);

    const again = sessionFrom(await signIn(user.email, 'second-password-9'));
    const dropped = await call('POST', '/api/settings/password', {
      bearer: again.token,
      body: { currentPassword: 'second-password-9', newPassword: 'third-password-9', revokeApiKeys: true },
    });
    expect(dropped.status).toBe(200);
    expect((await call('GET', '/api/settings', { bearer: keep })).status).toBe(401);

    const other = await newKey(again);
    const token = await gatewayToken(user.userId);
    expect((await call('POST', '/api/auth/signout?everywhere=true', { bearer: again.token, body: { revokeApiKeys: true } })).status).toBe(200);
    expect((await call('GET', '/api/settings', { bearer: other })).status).toBe(401);
    expect(await isGatewayToken(user.userId, token)).toBe(false);
  });

  it('the notice of a password change that keeps the API keys names the keys that still work', async () => {
    const user = await signUp();
    await newKey(user);
    const changed = await call('POST', '/api/settings/password', {
      bearer: user.token,
      body: { currentPassword: user.password, newPassword: 'second-password-9' },
    });
    expect(changed.status).toBe(200);
    const notice = (await readOutbox(user.email)).filter((m) => m.subject === 'Access to your account was revoked').at(-1)!;
    expect(notice.text).toMatch(/These API keys were NOT revoked and still work:\s+- ci \(sk_/);
  });

  it('the owner rotates the gateway token on demand; only the owner', async () => {
    const user = await signUp();
    const before = await gatewayToken(user.userId);
    const res = await call('POST', `/api/instance/${user.userId}/token/rotate`, { bearer: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, rotated: true });
    expect(res.body.token).not.toBe(before);
    expect(await isGatewayToken(user.userId, res.body.token)).toBe(true);
    expect((await call('GET', `/api/instance/${user.userId}/token`, { bearer: user.token })).body.token).toBe(res.body.token);
    const stranger = await signUp();
    expect((await call('POST', `/api/instance/${user.userId}/token/rotate`, { bearer: stranger.token })).status).toBe(403);
  });
});

describe('defect 10: referrals are visible, paid on proof, and capped per referrer', () => {
  it('settings show the own code; credit is paid when the referred address is proven, up to REFERRAL_CAP', async () => {
    const referrer = await signUp();
    const settings = await call('GET', '/api/settings', { bearer: referrer.token });
    const code = settings.body.referralCode as string;
    expect(code).toMatch(/^[a-z0-9]{10}$/);
    expect(settings.body.referralsCredited).toBe(0);

    const emails = [uniqueEmail('ref-a'), uniqueEmail('ref-b'), uniqueEmail('ref-c')];
    for (const email of emails) expect((await register(email, 'correct horse battery', { referralCode: code })).status).toBe(201);
    expect((await getUser(referrer.userId, true))?.credits).toBe(0);
    for (const email of emails) await verifyEmailOf(email);
    const after = await call('GET', '/api/settings', { bearer: referrer.token });
    expect(after.body.referralsCredited).toBe(2);
    expect(after.body.credits).toBe(2 * 100);
  });
});
