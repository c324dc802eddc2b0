import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * platform/config.ts parses the core settings in config() and every other section on its first read.
 * Each test loads a fresh copy of the module (its memo is module state) over an environment it sets.
 */
const touched = new Map<string, string | undefined>();
function setEnv(values: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(values)) {
    if (!touched.has(name)) touched.set(name, process.env[name]);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}
async function freshConfigModule() {
  vi.resetModules();
  return import('#platform/config');
}

afterEach(async () => {
  for (const [name, value] of touched) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  touched.clear();
  vi.resetModules();
});

describe('config sections', () => {
  it('parses a section only when it is read: a bad card setting fails card alone, with the variable and zod message', async () => {
    setEnv({ CARD_TIMEOUT_MS: '-5', GATEWAY_CARD_PRICES: '{"agent":5}' });
    const { config, cardConfig, ConfigError, gatewayConfig, oauthConfig, webhooksConfig } = await freshConfigModule();
    const c = config();
    expect(c.stage).toBe('test');
    expect(c.rateLimits.gateway).toEqual({ limit: 100, windowSeconds: 60, by: 'user' });
    expect(webhooksConfig().disableAfterMs).toBe(3 * 24 * 3600_000);
    expect(() => cardConfig()).toThrow(ConfigError);
    expect(() => cardConfig()).toThrow('invalid configuration: CARD_TIMEOUT_MS: Too small: expected number to be >0');
    expect(() => gatewayConfig()).toThrow('GATEWAY_CARD_PRICES: Too small: expected number to be >=30');
    // The other sections never looked at either.
    expect(oauthConfig().timeoutMs).toBe(5000);
  });

  it('fails config() itself on a bad core setting', async () => {
    setEnv({ DYNAMODB_MAX_ATTEMPTS: 'two' });
    const { config } = await freshConfigModule();
    expect(() => config()).toThrow('invalid configuration: DYNAMODB_MAX_ATTEMPTS: Invalid input: expected number, received NaN');
  });

  it('validateAllSettings and reloadConfig name every bad setting at once', async () => {
    setEnv({ CARD_TIMEOUT_MS: '0', CHANNEL_TELEGRAM_API_URL: 'not a url' });
    const { validateAllSettings, reloadConfig } = await freshConfigModule();
    expect(() => validateAllSettings()).toThrow(/CARD_TIMEOUT_MS: Too small.*; CHANNEL_TELEGRAM_API_URL: Invalid URL/);
    expect(() => reloadConfig()).toThrow(/CARD_TIMEOUT_MS/);
    setEnv({ CARD_TIMEOUT_MS: undefined, CHANNEL_TELEGRAM_API_URL: undefined, FILE_STORAGE: 's3' });
    expect(() => reloadConfig()).toThrow('FILE_STORAGE=s3 needs FILES_BUCKET');
  });

  it('keeps a section until reloadConfig, which drops every memoised one', async () => {
    setEnv({ GATEWAY_CARD_RATE: '2' });
    const { config, gatewayConfig, reloadConfig } = await freshConfigModule();
    const gateway = gatewayConfig();
    expect(gateway.card.rate).toBe('2');
    expect(gatewayConfig()).toBe(gateway);
    expect(config().adminEmails).toBe(config().adminEmails);
    setEnv({ GATEWAY_CARD_RATE: '3' });
    expect(gatewayConfig().card.rate).toBe('2');
    reloadConfig();
    expect(gatewayConfig().card.rate).toBe('3');
    expect(gatewayConfig()).not.toBe(gateway);
  });
});
