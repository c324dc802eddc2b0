import { describe, expect, it } from 'vitest';
import { checkPassword, hashPassword, verifyPassword } from '#domain/auth/passwords';

describe('argon2id password hashing', () => {
  it('produces a PHC string with the OWASP parameters and a fresh salt each time', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
  });

  it('verifies the right password only, and never throws on a malformed stored value', async () => {
    const h = await hashPassword('s3cret-passphrase');
    expect(await verifyPassword(h, 's3cret-passphrase')).toBe(true);
    expect(await verifyPassword(h, 's3cret-passphrasE')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'x')).toBe(false);
    expect(await verifyPassword('$argon2id$v=19$m=19456,t=2,p=1$bad$bad', 'x')).toBe(false);
  });

  it('burns the same work and says no when the account has no password', async () => {
    expect(await checkPassword(undefined, 'anything')).toBe(false);
  });
});
