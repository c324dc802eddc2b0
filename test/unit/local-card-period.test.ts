import { describe, expect, it } from 'vitest';
import { monthAfter } from '#adapters/card-local';

const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('the local card processor: a monthly plan period', () => {
  it('ends on the same day and time of the next month', () => {
    expect(iso(monthAfter(at('2026-12-02T18:30:05Z')))).toBe('2027-01-02T18:30:05.000Z');
    expect(iso(monthAfter(at('2026-04-15T00:00:00Z')))).toBe('2026-05-15T00:00:00.000Z');
  });

  it("ends on the next month's last day when that month is shorter", () => {
    expect(iso(monthAfter(at('2027-01-31T09:00:00Z')))).toBe('2027-02-28T09:00:00.000Z');
    expect(iso(monthAfter(at('2028-01-30T09:00:00Z')))).toBe('2028-02-29T09:00:00.000Z');
    expect(iso(monthAfter(at('2026-08-31T23:59:59Z')))).toBe('2026-09-30T23:59:59.000Z');
  });
});
