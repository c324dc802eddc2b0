import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, reloadConfig } from '../../shared/config';

afterEach(() => reloadConfig({ CARD_MODE: undefined, STAGE: 'test', AWS_LAMBDA_FUNCTION_NAME: undefined }));

describe('CARD_MODE=local (a card processor that takes no money)', () => {
  it('is allowed in the local stack and tests', () => {
    expect(reloadConfig({ CARD_MODE: 'local', STAGE: 'local' }).card.mode).toBe('local');
    expect(reloadConfig({ CARD_MODE: 'local', STAGE: 'test' }).card.mode).toBe('local');
  });

  it('is refused in AWS: the aws stage, or any process running in Lambda', () => {
    expect(() => reloadConfig({ CARD_MODE: 'local', STAGE: 'aws' })).toThrow(ConfigError);
    expect(() => reloadConfig({ CARD_MODE: 'local', STAGE: 'test', AWS_LAMBDA_FUNCTION_NAME: 'billing' })).toThrow('refused in AWS');
  });

  it('defaults to the real processor', () => {
    expect(reloadConfig({ CARD_MODE: undefined }).card.mode).toBe('processor');
    expect(reloadConfig({ STAGE: 'aws', CARD_MODE: undefined }).card.mode).toBe('processor');
  });
});
