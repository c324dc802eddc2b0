import { describe, expect, it } from 'vitest';
import { admissionOf, breakerIdOf, opensAfter, phaseOf } from '#domain/ai/breaker';

const s = { failures: 3, windowMs: 60_000, coolDownMs: 30_000 };

describe('model breaker state machine', () => {
  it('closed without a record or before it opened; open for the cool-down; half-open after it', () => {
    expect(phaseOf(undefined, 0, s)).toBe('closed');
    expect(phaseOf({ failures: 2, windowStartMs: 0 }, 1_000, s)).toBe('closed');
    expect(phaseOf({ failures: 3, windowStartMs: 0, openedAtMs: 1_000 }, 30_999, s)).toBe('open');
    expect(phaseOf({ failures: 3, windowStartMs: 0, openedAtMs: 1_000 }, 31_000, s)).toBe('half-open');
  });

  it('calls while closed, skips while open, probes once half-open and skips while a probe runs', () => {
    expect(admissionOf(undefined, 0, s)).toBe('call');
    expect(admissionOf({ failures: 3, windowStartMs: 0, openedAtMs: 0 }, 10_000, s)).toBe('skip');
    expect(admissionOf({ failures: 3, windowStartMs: 0, openedAtMs: 0 }, 40_000, s)).toBe('probe');
    expect(admissionOf({ failures: 3, windowStartMs: 0, openedAtMs: 0, probeUntilMs: 50_000 }, 40_000, s)).toBe('skip');
    // A probe that outlived its lease no longer holds the others back.
    expect(admissionOf({ failures: 3, windowStartMs: 0, openedAtMs: 0, probeUntilMs: 39_999 }, 40_000, s)).toBe('probe');
  });

  it('opens at the threshold, once', () => {
    expect(opensAfter({ failures: 2, windowStartMs: 0 }, s)).toBe(false);
    expect(opensAfter({ failures: 3, windowStartMs: 0 }, s)).toBe(true);
    expect(opensAfter({ failures: 4, windowStartMs: 0, openedAtMs: 5 }, s)).toBe(false);
  });

  it('one breaker per provider address and model; a user key gets its own', () => {
    const platform = { name: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', byok: false };
    expect(breakerIdOf(platform, 'openai/gpt-4o-mini')).toBe(breakerIdOf(platform, 'openai/gpt-4o-mini', 'u1'));
    expect(breakerIdOf(platform, 'openai/gpt-4o-mini')).not.toBe(breakerIdOf(platform, 'openai/gpt-4o'));
    expect(breakerIdOf({ ...platform, baseUrl: 'http://127.0.0.1:2/v1' }, 'openai/gpt-4o-mini')).not.toBe(breakerIdOf(platform, 'openai/gpt-4o-mini'));
    const own = { ...platform, byok: true };
    expect(breakerIdOf(own, 'openai/gpt-4o-mini', 'u1')).not.toBe(breakerIdOf(own, 'openai/gpt-4o-mini', 'u2'));
  });
});
