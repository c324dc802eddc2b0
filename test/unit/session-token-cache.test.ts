import { afterEach, describe, expect, it, vi } from 'vitest';
import { issueSessionToken, TokenInvalidError, verifySessionToken } from '#domain/auth/jwt';
import { reloadConfig } from '#platform/config';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/** A warm container remembers the tokens it verified (domain/auth/jwt.ts); what it remembers must never outlive what the token allows. */
describe('verified session tokens are remembered, never past their validity', () => {
  afterEach(() => {
    vi.useRealTimers();
    reloadConfig({ JWT_SECRET: TEST_JWT_SECRET });
  });

  it('refuses a remembered token once it has expired', async () => {
    const start = Date.UTC(2026, 0, 1);
    vi.useFakeTimers({ now: start, toFake: ['Date'] });
    const { token } = await issueSessionToken({ userId: 'u_cache1', email: 'cache1@example.com', role: 'user' }, start, 60);
    const first = await verifySessionToken(token);
    expect(first.userId).toBe('u_cache1');
    // A caller changing its copy must not change what the next request sees.
    first.userId = 'u_someone_else';
    vi.setSystemTime(start + 59_000);
    expect((await verifySessionToken(token)).userId).toBe('u_cache1');
    vi.setSystemTime(start + 60_000);
    await expect(verifySessionToken(token)).rejects.toBeInstanceOf(TokenInvalidError);
  });

  it('forgets every remembered token when the signing secret changes', async () => {
    const { token } = await issueSessionToken({ userId: 'u_cache2', email: 'cache2@example.com', role: 'user' });
    expect((await verifySessionToken(token)).userId).toBe('u_cache2');
    reloadConfig({ JWT_SECRET: `${TEST_JWT_SECRET}-rotated` });
    await expect(verifySessionToken(token)).rejects.toBeInstanceOf(TokenInvalidError);
  });

  it('never remembers a forged token as valid', async () => {
    const { token } = await issueSessionToken({ userId: 'u_cache3', email: 'cache3@example.com', role: 'user' });
    await verifySessionToken(token);
    const [header, payload, signature] = token.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    await expect(verifySessionToken(forged)).rejects.toBeInstanceOf(TokenInvalidError);
    await expect(verifySessionToken(forged)).rejects.toBeInstanceOf(TokenInvalidError);
  });
});
