import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quotaBytes } from '#functions/http/skills/skills/file-manager';
import { planAccess } from '#domain/skills/plan-access';
import { accountSession, storeActiveSubscription } from '../helpers/api';

const GIB = 1024 ** 3;
// worker-setup lists this address in ADMIN_EMAILS.
const ADMIN_ADDRESS = 'admin@example.com';

/** Every product file that reads the admin or tester list, which only the settings and the one derivation may. */
async function filesReadingTheLists(): Promise<string[]> {
  const found: string[] = [];
  for (const folder of ['adapters', 'data', 'domain', 'functions', 'http', 'local', 'platform', 'runtime', 'web']) {
    for (const entry of await readdir(folder, { recursive: true })) {
      if (!/\.tsx?$/.test(entry) || entry.endsWith('.test.ts')) continue;
      const path = join(folder, entry);
      const text = await readFile(path, 'utf8');
      if (/\b(adminEmails|testerEmails|ADMIN_EMAILS|TESTER_EMAILS)\b/.test(text)) found.push(path);
    }
  }
  return found.sort();
}

describe('admin rights', () => {
  it('an unconfirmed holder of an admin address gets its own plan in skills, not the network plan', async () => {
    const squatter = await accountSession({ email: ADMIN_ADDRESS, emailVerified: false });
    await storeActiveSubscription(squatter.userId, 'solo');
    expect((await planAccess(squatter.userId)).access.isAdmin).toBe(false);
    expect(await quotaBytes(squatter.userId)).toBe(2 * GIB);
    expect((await planAccess(squatter.userId)).access.limits?.name).toBe('solo');
  });

  it('the confirmed holder of an admin address gets the network plan in skills', async () => {
    const admin = await accountSession({ email: ADMIN_ADDRESS, emailVerified: true });
    await storeActiveSubscription(admin.userId, 'solo');
    expect((await planAccess(admin.userId)).access.isAdmin).toBe(true);
    expect(await quotaBytes(admin.userId)).toBe(16 * GIB);
  });

  it('admin is judged from an address in one place only (domain/auth/rights.ts, with the proof)', async () => {
    expect(await filesReadingTheLists()).toEqual(['domain/auth/rights.ts', 'platform/config.ts']);
  });
});
