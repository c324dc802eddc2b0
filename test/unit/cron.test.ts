import { describe, expect, it } from 'vitest';
import { CronError, nextCronTime, parseCron } from '#platform/cron';

const next = async (expr: string, after: string) => nextCronTime(await parseCron(expr), new Date(after))?.toISOString();

describe('five-field UTC cron', () => {
  it('runs every minute strictly after the given time, seconds dropped', async () => {
    expect(await next('* * * * *', '2026-11-24T10:00:00.000Z')).toBe('2026-11-24T10:01:00.000Z');
    expect(await next('* * * * *', '2026-11-24T10:00:59.999Z')).toBe('2026-11-24T10:01:00.000Z');
  });

  it('steps, ranges and lists', async () => {
    expect(await next('*/15 * * * *', '2026-11-24T10:01:00Z')).toBe('2026-11-24T10:15:00.000Z');
    expect(await next('0 9-17/4 * * *', '2026-11-24T13:00:00Z')).toBe('2026-11-24T17:00:00.000Z');
    expect(await next('5,35 * * * *', '2026-11-24T10:06:00Z')).toBe('2026-11-24T10:35:00.000Z');
    expect(await next('10/20 * * * *', '2026-11-24T10:31:00Z')).toBe('2026-11-24T10:50:00.000Z');
  });

  it('rolls over hours, days, months and years', async () => {
    expect(await next('30 2 * * *', '2026-11-24T02:30:00Z')).toBe('2026-11-25T02:30:00.000Z');
    expect(await next('0 0 1 * *', '2026-12-15T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(await next('0 12 31 * *', '2026-11-01T00:00:00Z')).toBe('2026-12-31T12:00:00.000Z');
    expect(await next('0 0 29 2 *', '2026-03-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
  });

  it('day of week: 0 and 7 are Sunday; with both day fields restricted either matches', async () => {
    // 2026-11-24 is a Tuesday.
    expect(await next('0 8 * * 0', '2026-11-24T00:00:00Z')).toBe('2026-11-29T08:00:00.000Z');
    expect(await next('0 8 * * 7', '2026-11-24T00:00:00Z')).toBe('2026-11-29T08:00:00.000Z');
    expect(await next('0 8 * * 1-5', '2026-11-27T09:00:00Z')).toBe('2026-11-30T08:00:00.000Z');
    expect(await next('0 8 1 * 3', '2026-11-24T09:00:00Z')).toBe('2026-11-25T08:00:00.000Z');
    expect(await next('0 8 26 * 0', '2026-11-24T09:00:00Z')).toBe('2026-11-26T08:00:00.000Z');
  });

  it('reads names, last day of month and nth weekday (croner)', async () => {
    expect(await next('0 8 * * MON', '2026-11-24T00:00:00Z')).toBe('2026-11-30T08:00:00.000Z');
    expect(await next('0 0 L * *', '2026-02-02T00:00:00Z')).toBe('2026-02-28T00:00:00.000Z');
    expect(await next('0 9 * * MON#1', '2026-11-24T00:00:00Z')).toBe('2026-12-07T09:00:00.000Z');
  });

  it('refuses malformed, out-of-range and never-running expressions', async () => {
    for (const bad of [
      '* * * *',
      '60 * * * *',
      '* 24 * * *',
      '* * 0 * *',
      '* * * 13 *',
      '* * * * 8',
      'a * * * *',
      '5-1 * * * *',
      '*/0 * * * *',
      '0 0 30 2 *',
      '0 0 31 4 *',
      '0 * * * * *',
    ])
      await expect(parseCron(bad), bad).rejects.toThrow(CronError);
  });
});
