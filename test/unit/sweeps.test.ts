import { describe, expect, it } from 'vitest';
import { FIVE_MINUTE_SWEEP, MINUTE_SWEEP, sweepsOf } from '#contract/sweeps';

describe('heartbeat sweeps by rule', () => {
  it('the minute rule runs only the minute sweep, the 5-minute rule only the checks, the local timer both', () => {
    expect(sweepsOf(MINUTE_SWEEP)).toEqual({ fiveMinute: false, minute: true });
    expect(sweepsOf(FIVE_MINUTE_SWEEP)).toEqual({ fiveMinute: true, minute: false });
    expect(sweepsOf(undefined)).toEqual({ fiveMinute: true, minute: true });
    expect(sweepsOf({ 'detail-type': 'Scheduled Event' })).toEqual({ fiveMinute: true, minute: true });
  });
});
