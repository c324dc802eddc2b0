import { describe, expect, it } from 'vitest';
import { cursorAfterPass } from '#domain/lifecycle/subdomain-backfill';

describe('the subdomain backfill cursor after a pass', () => {
  const now = new Date('2026-01-02T03:04:05.000Z');
  const position = { pk: 'USER#u1', sk: 'INSTANCE' };

  it('goes on from where the pass stopped, keeping whether something is to be tried again', () => {
    expect(cursorAfterPass(position, false, now)).toEqual({ next: position, retry: false });
    expect(cursorAfterPass(position, true, now)).toEqual({ next: position, retry: true });
  });

  it('completes at the end of the table when nothing is left to try', () => {
    expect(cursorAfterPass(undefined, false, now)).toEqual({ completedAt: '2026-01-02T03:04:05.000Z' });
  });

  it('starts a new sweep from the start when a failure is left to try', () => {
    expect(cursorAfterPass(undefined, true, now)).toEqual({});
  });
});
