import { describe, expect, it } from 'vitest';
import { utcMinute } from '#data/request-outcomes';

/** The outcome minute is formatted once per minute (data/request-outcomes.ts); the label must still follow every input. */
describe('utcMinute', () => {
  it('labels each instant with its own UTC minute, also when going back and forth between minutes', () => {
    const at = Date.parse('2026-03-01T23:59:59.999Z');
    expect(utcMinute(at)).toBe('2026-03-01T23:59');
    expect(utcMinute(at - 59_999)).toBe('2026-03-01T23:59');
    expect(utcMinute(at + 1)).toBe('2026-03-02T00:00');
    expect(utcMinute(new Date(at))).toBe('2026-03-01T23:59');
    expect(utcMinute(at - 60_000)).toBe('2026-03-01T23:58');
    expect(utcMinute(new Date('2026-03-02T00:00:30Z'))).toBe('2026-03-02T00:00');
  });
});
