import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutbox } from '#adapters/email';
import { config, reloadConfig } from '#platform/config';
import { allRoutes } from '#contract';
import { call, uniqueIp } from '../helpers/api';
import { badTokens } from '../helpers/tokens';
import { register, uniqueEmail } from './accounts-helpers';

const outbox = mkdtempSync(path.join(tmpdir(), 'hardening-outbox-'));

beforeAll(() => {
  reloadConfig({ OUTBOX_DIR: outbox, FORGOT_PASSWORD_MIN_MS: '0' });
});
afterAll(() => {
  reloadConfig({ OUTBOX_DIR: undefined, FORGOT_PASSWORD_MIN_MS: undefined });
});

describe('defect 11: the smaller holes', () => {
  it('a token dated years ahead, one living a century, and one whose iatMs is ahead are all 401 TOKEN_INVALID', async () => {
    const tokens = await badTokens();
    for (const name of ['futureIssued', 'centuryLifetime', 'issueTimeAhead'] as const) {
      const res = await call('GET', '/api/settings', { bearer: tokens[name] });
      expect(res.status, name).toBe(401);
      expect(res.body.code, name).toBe('TOKEN_INVALID');
    }
  });

  it('forgot-password sends at most forgotPasswordAccount emails per address, from however many client addresses, with the same answer', async () => {
    const email = uniqueEmail('flood');
    expect((await register(email)).status).toBe(201);
    const limit = config().rateLimits.forgotPasswordAccount!.limit;
    const answers = [];
    for (let i = 0; i < limit + 3; i++) answers.push(await call('POST', '/api/auth/forgot-password', { body: { email }, ip: uniqueIp() }));
    expect(new Set(answers.map((a) => `${a.status} ${a.text}`)).size).toBe(1);
    expect(answers[0]!.status).toBe(200);
    const resets = (await readOutbox(email)).filter((m) => /reset/i.test(m.subject));
    expect(resets).toHaveLength(limit);
  });

  it('the OpenAPI example of POST /api/wallet/hosted carries no private key', () => {
    const route = allRoutes.find((r) => r.operation === 'createHostedWallet')!;
    expect(JSON.stringify(route.example ?? {})).not.toMatch(/0x[0-9a-f]{64}/i);
  });
});
