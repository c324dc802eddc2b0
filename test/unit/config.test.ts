import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, gatingConfig, reloadConfig, webhooksConfig } from '#platform/config';

/** The webhooks section after reloading with `env`. */
function webhooksAfter(env: Record<string, string | undefined>) {
  reloadConfig(env);
  return webhooksConfig();
}
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

afterEach(() =>
  reloadConfig({
    STAGE: 'test',
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMITS: undefined,
    ADMIN_EMAILS: 'admin@example.com',
    WEBHOOK_RETRY_SCHEDULE_MS: undefined,
    WEBHOOK_DISABLE_AFTER_MS: undefined,
  }),
);

describe('config', () => {
  it('refuses a JWT secret shorter than 32 bytes', () => {
    expect(() => reloadConfig({ JWT_SECRET: 'x'.repeat(31) })).toThrow(ConfigError);
    expect(reloadConfig({ JWT_SECRET: 'x'.repeat(32) }).jwt.secret).toHaveLength(32);
  });

  it('token gating calls no public chain host by default outside AWS', () => {
    reloadConfig({ GATING_RPC_URL: undefined, CHAIN_RPC_URL: undefined });
    expect(gatingConfig().rpcUrl).toBeUndefined();
    reloadConfig({ GATING_RPC_URL: undefined, CHAIN_RPC_URL: 'http://127.0.0.1:8545' });
    expect(gatingConfig().rpcUrl).toBe('http://127.0.0.1:8545');
    reloadConfig({ CHAIN_RPC_URL: undefined });
  });

  it('parses the admin list case-insensitively and trims it', () => {
    expect(reloadConfig({ ADMIN_EMAILS: ' Ops@Example.com, ,b@example.com' }).adminEmails).toEqual(['ops@example.com', 'b@example.com']);
  });

  it('has the spec limits by default and takes overrides from RATE_LIMITS', () => {
    const c = reloadConfig({ RATE_LIMITS: JSON.stringify({ register: { limit: 5 } }) });
    expect(c.rateLimits.gateway).toEqual({ limit: 100, windowSeconds: 60, by: 'user' });
    expect(c.rateLimits.chat!.limit).toBe(60);
    expect(c.rateLimits.instance!.limit).toBe(30);
    expect(c.rateLimits.register).toEqual({ limit: 5, windowSeconds: 600, by: 'ip' });
    expect(() => reloadConfig({ RATE_LIMITS: '{bad' })).toThrow('RATE_LIMITS must be JSON');
    expect(() => reloadConfig({ RATE_LIMITS: JSON.stringify({ register: { limit: -1 } }) })).toThrow(ConfigError);
  });

  it('retries webhooks over more than 24 hours by default, and refuses a shorter schedule or disable window in AWS only', () => {
    const defaults = webhooksAfter({});
    expect(defaults.retryScheduleMs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(defaults.disableAfterMs).toBe(3 * 24 * 3600_000);
    expect(webhooksAfter({ WEBHOOK_RETRY_SCHEDULE_MS: '100, 200' }).retryScheduleMs).toEqual([100, 200]);
    expect(() => reloadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '100,-5' })).toThrow(ConfigError);
    expect(() => reloadConfig({ STAGE: 'aws', WEBHOOK_RETRY_SCHEDULE_MS: '100,200' })).toThrow(/must cover at least 24 hours/);
    expect(() => reloadConfig({ STAGE: 'aws', WEBHOOK_RETRY_SCHEDULE_MS: undefined, WEBHOOK_DISABLE_AFTER_MS: '1000' })).toThrow(/at least a day/);
    expect(webhooksAfter({ STAGE: 'aws', WEBHOOK_RETRY_SCHEDULE_MS: '43200000,43200000', WEBHOOK_DISABLE_AFTER_MS: undefined }).retryScheduleMs).toHaveLength(
      2,
    );
  });
});
