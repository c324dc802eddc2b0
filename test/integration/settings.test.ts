import { randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '#platform/crypto/api-keys';
import { csrfTokenFor } from '#domain/auth/csrf';
import { issueSessionToken } from '#domain/auth/jwt';
import { hashPassword } from '#domain/auth/passwords';
import { reloadConfig } from '#platform/config';
import { db, tableName } from '#data/client';
import * as keys from '#data/keys';
import { getGlobal, transact, tx } from '#data/tenant';
import { createUser, findUserIdByEmail, getUser } from '#data/users';
import { readOutbox } from '#adapters/email';
import { call, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { register, sessionFrom, signIn, signUp, uniqueEmail, verifyEmailOf } from './accounts-helpers';

beforeAll(() => {
  reloadConfig({ OUTBOX_DIR: mkdtempSync(path.join(tmpdir(), 'settings-outbox-')), FORGOT_PASSWORD_MIN_MS: '0' });
});
afterEach(() => {
  reloadConfig({ ADMIN_EMAILS: 'admin@example.com', TESTER_EMAILS: 'tester@example.com' });
});

const PASSWORD = 'correct horse battery';

async function partition(userId: string) {
  const out = await db().send(
    new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.userPartition(userId) } }),
  );
  return out.Items ?? [];
}

/** A session for the user signed in `minutesAgo` (for the fresh-session rule). */
async function sessionIssuedAgo(user: TestSession, minutesAgo: number): Promise<TestSession> {
  const { token, jti } = await issueSessionToken({ userId: user.userId, email: user.email, role: 'user' }, Date.now() - minutesAgo * 60_000);
  return { ...user, token, csrf: csrfTokenFor(jti) };
}

describe('GET /api/settings', () => {
  it("answers the caller's profile with the documented notification defaults", async () => {
    const user = await signUp();
    const res = await call('GET', '/api/settings', { session: user });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.userId,
      email: user.email,
      name: user.email,
      plan: 'none',
      credits: 0,
      twoFactorEnabled: false,
      notifications: { email: true, agentStatus: true, billing: true, productUpdates: false },
      emailVerified: false,
      pendingEmail: null,
      referralCode: (await getUser(user.userId, true))!.referralCode,
      referralsCredited: 0,
    });
    expect(res.text).not.toContain('passwordHash');
  });

  it('answers 401 without a session and 404 for a valid token of an account that does not exist', async () => {
    expect((await call('GET', '/api/settings')).status).toBe(401);
    expect((await call('GET', '/api/settings', { session: await testSession() })).status).toBe(404);
  });
});

describe('cross-account attempts on every settings route change only the caller', () => {
  it('never reads or changes another account', async () => {
    const victim = await signUp();
    const attacker = await signUp();
    const before = await getUser(victim.userId, true);
    const attempts = [
      call('GET', '/api/settings', { session: attacker }),
      call('POST', '/api/settings', { session: attacker, body: { name: 'Mallory', userId: victim.userId } }),
      call('PATCH', '/api/settings', { session: attacker, body: { name: 'Mallory', id: victim.userId } }),
      call('POST', '/api/settings/password', { session: attacker, body: { currentPassword: PASSWORD, newPassword: 'pwned-password', userId: victim.userId } }),
      call('DELETE', '/api/settings', { session: attacker, body: { password: PASSWORD, userId: victim.userId } }),
      // A victim's cookie without its CSRF token (a cross-site form post) is refused on every write.
      call('POST', '/api/settings', { session: victim, csrf: false, body: { name: 'Mallory' } }),
      call('PATCH', '/api/settings', { session: victim, csrf: false, body: { name: 'Mallory' } }),
      call('POST', '/api/settings/password', { session: victim, csrf: false, body: { currentPassword: PASSWORD, newPassword: 'pwned-password' } }),
      call('DELETE', '/api/settings', { session: victim, csrf: false, body: { password: PASSWORD } }),
    ];
    const results = await Promise.all(attempts);
    expect(results[0]!.body.id).toBe(attacker.userId);
    for (const r of results.slice(1, 5)) expect(r.status).toBe(400);
    for (const r of results.slice(5)) expect(r.status).toBe(403);
    for (const r of results) expect(r.text ?? '').not.toContain(victim.email);
    expect(await getUser(victim.userId, true)).toEqual(before);
    expect((await signIn(victim.email, PASSWORD)).status).toBe(200);
  });
});

describe('POST and PATCH /api/settings', () => {
  it('changes the name and merges notification preferences key by key', async () => {
    const user = await signUp();
    const named = await call('POST', '/api/settings', { session: user, body: { name: 'Ada King' } });
    expect(named.status).toBe(200);
    expect(named.body.name).toBe('Ada King');
    const p1 = await call('PATCH', '/api/settings', { session: user, body: { notifications: { productUpdates: true } } });
    expect(p1.body.notifications).toEqual({ email: true, agentStatus: true, billing: true, productUpdates: true });
    const p2 = await call('PATCH', '/api/settings', { session: user, body: { name: 'Ada', notifications: { agentStatus: false } } });
    expect(p2.body).toMatchObject({ name: 'Ada', notifications: { email: true, agentStatus: false, billing: true, productUpdates: true } });
    expect((await call('GET', '/api/settings', { session: user })).body).toEqual(p2.body);
    const unknown = await call('PATCH', '/api/settings', { session: user, body: { notifications: { sms: true } } });
    expect(unknown.status).toBe(400);
  });

  it('keeps concurrent changes to different preferences', async () => {
    const user = await signUp();
    await Promise.all([
      call('PATCH', '/api/settings', { session: user, body: { notifications: { billing: false } } }),
      call('PATCH', '/api/settings', { session: user, body: { notifications: { productUpdates: true } } }),
    ]);
    expect((await call('GET', '/api/settings', { session: user })).body.notifications).toEqual({
      email: true,
      agentStatus: true,
      billing: false,
      productUpdates: true,
    });
  });

  it('changes the email only with the current password and a confirmed link to the new address, then signs out every session and frees the old address', async () => {
    const user = await signUp();
    const newEmail = uniqueEmail('moved');
    const missing = await call('POST', '/api/settings', { session: user, body: { email: newEmail } });
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('CURRENT_PASSWORD_REQUIRED');
    const wrong = await call('POST', '/api/settings', { session: user, body: { email: newEmail, currentPassword: 'wrong password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_PASSWORD');

    const asked = await call('POST', '/api/settings', { session: user, body: { email: newEmail.toUpperCase(), currentPassword: PASSWORD } });
    expect(asked.status, asked.text).toBe(200);
    // Nothing moves before the new address is proven.
    expect(asked.body).toMatchObject({ email: user.email, pendingEmail: newEmail });
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    expect(await findUserIdByEmail(newEmail)).toBeUndefined();

    const confirmed = await verifyEmailOf(newEmail);
    expect(confirmed.body).toMatchObject({ email: newEmail, emailVerified: true });
    // Session tokens carry the email: the old ones no longer work.
    expect((await call('GET', '/api/settings', { session: user })).status).toBe(401);
    const renewed = sessionFrom(await signIn(newEmail, PASSWORD));
    expect((await call('GET', '/api/settings', { session: renewed })).body).toMatchObject({ email: newEmail, emailVerified: true, pendingEmail: null });
    expect((await signIn(user.email, PASSWORD)).status).toBe(401);
    expect((await register(user.email)).status).toBe(201);
  });

  it('refuses an email that another account holds with 409', async () => {
    const user = await signUp();
    const other = await signUp();
    const res = await call('POST', '/api/settings', { session: user, body: { email: other.email, currentPassword: PASSWORD } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('EMAIL_IN_USE');
    expect((await getUser(user.userId, true))?.email).toBe(user.email);
  });

  it('gives a contested new email to exactly one of two accounts racing for it', async () => {
    const a = await signUp();
    const b = await signUp();
    const target = uniqueEmail('contested');
    const asked = await Promise.all([a, b].map((s) => call('POST', '/api/settings', { session: s, body: { email: target, currentPassword: PASSWORD } })));
    expect(asked.map((r) => r.status)).toEqual([200, 200]);
    const tokens = (await readOutbox(target)).map((m) => new URL(/(http\S+verify-email\?token=\S+)/.exec(m.text)![1]!).searchParams.get('token')!);
    expect(tokens).toHaveLength(2);
    const results = await Promise.all(tokens.map((token) => call('POST', '/api/auth/verify-email', { body: { token }, ip: uniqueIp() })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const winnerId = await findUserIdByEmail(target);
    const winner = winnerId === a.userId ? a : b;
    expect((await getGlobal<{ userId: string }>(keys.emailIndex(target), true))?.userId).toBe(winner.userId);
    const loser = winner === a ? b : a;
    expect((await getUser(loser.userId, true))?.email).toBe(loser.email);
    expect((await getGlobal<{ userId: string }>(keys.emailIndex(loser.email), true))?.userId).toBe(loser.userId);
  });

  it('refuses to take an address of the admin or tester list, even one nobody registered', async () => {
    reloadConfig({ ADMIN_EMAILS: 'admin@example.com,boss@example.com' });
    const user = await signUp();
    for (const email of [
      'boss@example.com',
      'BOSS@example.com',
      'tester@example.com',
      '0x1111111111111111111111111111111111111111@wallet.local',
      'codehost-42@OAUTH.local',
      'fid-7@social.local',
    ]) {
      const res = await call('POST', '/api/settings', { session: user, body: { email, currentPassword: PASSWORD } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('EMAIL_RESERVED');
    }
    expect((await getUser(user.userId, true))?.email).toBe(user.email);
    expect(await getGlobal(keys.emailIndex('boss@example.com'), true)).toBeUndefined();
  });
});

describe('POST /api/settings/password', () => {
  it('refuses a 7-character new password and accepts an 8-character one', async () => {
    const user = await signUp();
    const short = await call('POST', '/api/settings/password', { session: user, body: { currentPassword: PASSWORD, newPassword: '1234567' } });
    expect(short.status).toBe(400);
    const ok = await call('POST', '/api/settings/password', { session: user, body: { currentPassword: PASSWORD, newPassword: '12345678' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect((await signIn(user.email, '12345678')).status).toBe(200);
  });

  it('answers 401 for a wrong current password and leaves the session valid', async () => {
    const user = await signUp();
    const res = await call('POST', '/api/settings/password', { session: user, body: { currentPassword: 'not it at all', newPassword: 'new-password-1' } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_PASSWORD');
    expect((await call('GET', '/api/settings', { session: user })).status).toBe(200);
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  });

  it("signs out the other sessions while the caller's keeps working", async () => {
    const user = await signUp();
    const otherDevice = sessionFrom(await signIn(user.email, PASSWORD));
    expect((await call('GET', '/api/settings', { session: otherDevice })).status).toBe(200);
    const res = await call('POST', '/api/settings/password', { session: user, body: { currentPassword: PASSWORD, newPassword: 'brand-new-password' } });
    expect(res.status).toBe(200);
    const rejected = await call('GET', '/api/settings', { session: otherDevice });
    expect(rejected.status).toBe(401);
    expect(rejected.body.code).toBe('TOKEN_INVALID');
    expect((await call('GET', '/api/settings', { session: user })).status).toBe(200);
  });

  it('voids an emailed reset link', async () => {
    const user = await signUp();
    await call('POST', '/api/auth/forgot-password', { body: { email: user.email }, ip: uniqueIp() });
    const { readOutbox } = await import('#adapters/email');
    const token = new URL(/(http\S+)/.exec((await readOutbox(user.email)).at(-1)!.text)![1]!).searchParams.get('token')!;
    await call('POST', '/api/settings/password', { session: user, body: { currentPassword: PASSWORD, newPassword: 'brand-new-password' } });
    expect((await call('POST', '/api/auth/reset-password', { body: { token, password: 'attacker-choice' }, ip: uniqueIp() })).status).toBe(400);
  });
});

describe('DELETE /api/settings', () => {
  it('needs the password or a session signed in within 10 minutes, and refuses API keys', async () => {
    const user = await signUp();
    const stale = await sessionIssuedAgo(user, 11);
    const noProof = await call('DELETE', '/api/settings', { session: stale });
    expect(noProof.status).toBe(401);
    expect(noProof.body.code).toBe('REAUTH_REQUIRED');
    const wrong = await call('DELETE', '/api/settings', { session: stale, body: { password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_PASSWORD');

    const apiKey = generateApiKey();
    await transact([tx.put({ ...keys.apiKeyHash(hashApiKey(apiKey)), userId: user.userId, email: user.email, keyId: 'k1' })]);
    const byKey = await call('DELETE', '/api/settings', { bearer: apiKey, body: { password: PASSWORD } });
    expect(byKey.status).toBe(403);
    expect(await getUser(user.userId, true)).toBeDefined();

    const fresh = await sessionIssuedAgo(user, 9);
    expect((await call('DELETE', '/api/settings', { session: fresh })).status).toBe(200);
  });

  it('removes every item of the account and its global look-ups, and no token of it works again', async () => {
    const email = uniqueEmail('leaving');
    const wallet = `0x${randomBytes(20).toString('hex')}`;
    const created = await createUser({
      email,
      passwordHash: await hashPassword(PASSWORD),
      walletAddress: wallet,
      logins: [{ provider: 'wallet', subject: wallet }],
    });
    const userId = created.userId;
    const user = sessionFrom(await signIn(email, PASSWORD));
    const other = sessionFrom(await signIn(email, PASSWORD));
    await call('PATCH', '/api/settings', { session: user, body: { notifications: { billing: false } } });
    await call('POST', '/api/auth/forgot-password', { body: { email }, ip: uniqueIp() });
    // An item of another group that owns a global look-up records it in `globalKeys`.
    const apiKey = generateApiKey();
    const apiKeyGlobal = keys.apiKeyHash(hashApiKey(apiKey));
    await transact([tx.put({ ...apiKeyGlobal, userId, email, keyId: 'k1' }), tx.put({ ...keys.apiKey(userId, 'k1'), name: 'ci', globalKeys: [apiKeyGlobal] })]);
    // An API key and a custodial wallet made through their own routes.
    const realKey = await call('POST', '/api/keys', { session: user, body: { name: 'deploy' } });
    expect(realKey.status, realKey.text).toBe(201);
    const custodial = await call('POST', '/api/wallet', { session: user, body: { action: 'create' } });
    expect(custodial.status, custodial.text).toBe(200);
    const resetItem = (await partition(userId)).find((i) => i.sk === keys.passwordReset(userId).sk)!;
    const before = (await partition(userId)).map((i) => i.sk);
    for (const sk of ['PROFILE', `LOGIN#wallet#${wallet}`, 'PASSWORDRESET', 'APIKEY#k1', `APIKEY#${realKey.body.id}`, 'WALLET']) expect(before).toContain(sk);

    const res = await call('DELETE', '/api/settings', { session: user, body: { password: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(res.cookies.some((c) => /^session=;.*Max-Age=0/.test(c))).toBe(true);

    // Only the revocation record is left, and it expires after the longest token lifetime.
    const left = await partition(userId);
    expect(left.map((i) => i.sk)).toEqual(['SESSIONS']);
    expect(Number(left[0]!.expiresAt)).toBeGreaterThan(Date.now() / 1000 + 7 * 86400);
    expect(Number(left[0]!.expiresAt)).toBeLessThan(Date.now() / 1000 + 8 * 86400);
    const lookups = [
      keys.emailIndex(email),
      keys.referralCode(created.referralCode),
      keys.loginIdentity('wallet', wallet),
      keys.resetToken(String(resetItem.tokenHash)),
      apiKeyGlobal,
      keys.apiKeyHash(hashApiKey(realKey.body.key)),
      keys.walletAddress(custodial.body.address),
    ];
    for (const key of lookups) {
      expect(await getGlobal(key, true), key.pk).toBeUndefined();
    }
    for (const s of [user, other]) expect((await call('GET', '/api/settings', { session: s })).status).toBe(401);
    expect((await call('GET', '/api/settings', { bearer: apiKey })).status).toBe(401);
    expect((await call('GET', '/api/keys', { bearer: realKey.body.key })).status).toBe(401);
    expect((await signIn(email, PASSWORD)).status).toBe(401);
    // The address is free again, for a new account.
    const again = await register(email);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(userId);
  });

  it('answers 404 for a token of an account that does not exist', async () => {
    const ghost = await testSession();
    expect((await call('DELETE', '/api/settings', { session: ghost, body: {} })).status).toBe(404);
  });

  it('keeps the referral credit the referrer already earned', async () => {
    const referrer = await signUp();
    const code = (await getUser(referrer.userId, true))!.referralCode;
    const referred = await signUp({ extra: { referralCode: code } });
    const before = (await getUser(referrer.userId, true))!.credits;
    expect((await call('DELETE', '/api/settings', { session: referred, body: { password: PASSWORD } })).status).toBe(200);
    expect((await getUser(referrer.userId, true))!.credits).toBe(before);
  });
});
