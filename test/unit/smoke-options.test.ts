import { describe, expect, it } from 'vitest';
import { parseSmokeArgs, UsageError } from '#ops/smoke/options';

const parse = (...argv: string[]) => parseSmokeArgs(argv, () => 'abc123');

describe('npm run smoke: its options', () => {
  it('signs up a random throwaway address by default, with the bounds and no webhook', () => {
    expect(parse('--url', 'https://app.example.com/', '--sign-up')).toEqual({
      baseUrl: 'https://app.example.com',
      account: { kind: 'sign-up', email: 'smoke-abc123@example.com' },
      provisionTimeoutSeconds: 120,
      stepTimeoutSeconds: 30,
      webhook: undefined,
      json: false,
    });
  });

  it('reads the confirmation sources, the webhook receivers and the other accounts', () => {
    const signUp = (...more: string[]) => parse('--url', 'http://127.0.0.1:3000', '--sign-up', ...more);
    expect(signUp('--confirm-from', 'outbox:.data/outbox')).toMatchObject({ account: { confirmFrom: { kind: 'outbox', dir: '.data/outbox' } } });
    expect(signUp('--confirm-from', 'local-mail')).toMatchObject({ account: { confirmFrom: { kind: 'local-mail' } } });
    expect(signUp('--webhook-url', 'local')).toMatchObject({ webhook: { kind: 'listener', port: 0 } });
    expect(signUp('--webhook-listen', '9000', '--webhook-url', 'https://tunnel.example.com/h')).toMatchObject({
      webhook: { kind: 'listener', port: 9000, url: 'https://tunnel.example.com/h' },
    });
    expect(signUp('--webhook-url', 'https://hooks.example.com/h', '--timeout', '300', '--json')).toMatchObject({
      webhook: { kind: 'external', url: 'https://hooks.example.com/h' },
      provisionTimeoutSeconds: 300,
      json: true,
    });
    expect(parse('--url', 'http://127.0.0.1:3000', '--api-key', 'sk_x')).toMatchObject({ account: { kind: 'api-key', apiKey: 'sk_x' } });
    expect(parse('--url', 'http://127.0.0.1:3000', '--email', 'a@example.com', '--password', 'pw-long-enough')).toMatchObject({
      account: { kind: 'sign-in', email: 'a@example.com', password: 'pw-long-enough' },
    });
    expect(parse('--help')).toBe('help');
  });

  it('refuses what it cannot run, with the reason', () => {
    const refused = (...argv: string[]) => {
      try {
        parse(...argv);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused('--sign-up')).toMatch(/--url <base> is required/);
    expect(refused('--url', 'ftp://x', '--sign-up')).toMatch(/http\(s\) URL/);
    expect(refused('--url', 'http://x')).toMatch(/choose an account/);
    expect(refused('--url', 'http://x', '--sign-up', '--api-key', 'sk_x')).toMatch(/choose one account/);
    expect(refused('--url', 'http://x', '--api-key', 'sk_x', '--confirm-from', 'prompt')).toMatch(/--confirm-from goes with --sign-up/);
    expect(refused('--url', 'http://x', '--sign-up', '--confirm-from', 'inbox')).toMatch(/local-mail, outbox:<dir> or prompt/);
    expect(refused('--url', 'http://x', '--sign-up', '--timeout', '0')).toMatch(/--timeout must be a whole number/);
    expect(refused('--url', 'http://x', '--sign-up', '--webhook-listen', 'abc')).toMatch(/port number/);
    expect(refused('--url', 'http://x', '--sign-up', '--nope')).toMatch(/nope/);
  });
});
