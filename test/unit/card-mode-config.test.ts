import { afterEach, describe, expect, it } from 'vitest';
import { cardConfig, ConfigError, reloadConfig } from '#platform/config';

/** The card section after reloading with `env`. */
function cardAfter(env: Record<string, string | undefined>) {
  reloadConfig(env);
  return cardConfig();
}

afterEach(() => reloadConfig({ CARD_MODE: undefined, STAGE: 'test', AWS_LAMBDA_FUNCTION_NAME: undefined }));

describe('CARD_MODE=local (a card processor that takes no money)', () => {
  it('is allowed in the local stack and tests', () => {
    expect(cardAfter({ CARD_MODE: 'local', STAGE: 'local' }).mode).toBe('local');
    expect(cardAfter({ CARD_MODE: 'local', STAGE: 'test' }).mode).toBe('local');
  });

  it('is refused in AWS: the aws stage, or any process running in Lambda', () => {
    expect(() => reloadConfig({ CARD_MODE: 'local', STAGE: 'aws' })).toThrow(ConfigError);
    expect(() => reloadConfig({ CARD_MODE: 'local', STAGE: 'test', AWS_LAMBDA_FUNCTION_NAME: 'billing' })).toThrow('refused in AWS');
  });

  it('defaults to the local processor in the local stack only, the real one in tests and AWS', () => {
    expect(cardAfter({ STAGE: 'local', CARD_MODE: undefined }).mode).toBe('local');
    expect(cardAfter({ STAGE: 'local', CARD_MODE: 'processor' }).mode).toBe('processor');
    expect(cardAfter({ STAGE: 'test', CARD_MODE: undefined }).mode).toBe('processor');
    expect(cardAfter({ STAGE: 'aws', CARD_MODE: undefined }).mode).toBe('processor');
    expect(cardAfter({ STAGE: 'local', AWS_LAMBDA_FUNCTION_NAME: 'billing', CARD_MODE: undefined }).mode).toBe('processor');
  });
});
