import { describe, expect, it } from 'vitest';
import { frequencyMinutes, HeartbeatFrequency } from '#contract/metrics';
import { addFrequency, applyChange, dueShardOf, HEARTBEAT_DUE_SHARDS } from '#data/heartbeat';

describe('heartbeat frequency', () => {
  it.each([
    ['5m', 5],
    ['30m', 30],
    ['3h', 180],
    ['1d', 1440],
    ['30d', 43_200],
    ['720h', 43_200],
  ])('%s is %d minutes and valid', (f, minutes) => {
    expect(frequencyMinutes(f)).toBe(minutes);
    expect(HeartbeatFrequency().safeParse(f).success).toBe(true);
  });

  it.each(['4m', '31d', '721h', '43201m', '0m', '0h', '3', 'h', '3 h', '3H', '-3h', '1.5h', '03h', '1w', '', '123456789m'])('%j is refused', (f) => {
    expect(HeartbeatFrequency().safeParse(f).success).toBe(false);
  });

  it('adds the frequency to a time', () => {
    expect(addFrequency(new Date('2030-01-01T00:00:00.000Z'), '90m').toISOString()).toBe('2030-01-01T01:30:00.000Z');
  });
});

describe('heartbeat settings changes', () => {
  const now = new Date('2030-06-01T12:00:00.000Z');
  const off = { frequency: '3h', enabled: false, lastHeartbeat: null, nextHeartbeat: null };

  it('switching on makes the heartbeat due now', () => {
    expect(applyChange(off, { enabled: true }, now)).toEqual({ ...off, enabled: true, nextHeartbeat: now.toISOString() });
  });

  it('a new frequency while on counts from the last heartbeat, but never schedules in the past', () => {
    const on = { frequency: '3h', enabled: true, lastHeartbeat: '2030-06-01T11:00:00.000Z', nextHeartbeat: '2030-06-01T14:00:00.000Z' };
    expect(applyChange(on, { frequency: '2h' }, now).nextHeartbeat).toBe('2030-06-01T13:00:00.000Z');
    expect(applyChange(on, { frequency: '30m' }, now).nextHeartbeat).toBe(now.toISOString());
    expect(applyChange(on, {}, now)).toEqual(on);
  });

  it('switching off clears the next heartbeat, resetting switches the default back on; both keep the last one', () => {
    const on = { frequency: '1h', enabled: true, lastHeartbeat: '2030-06-01T11:00:00.000Z', nextHeartbeat: '2030-06-01T12:00:00.000Z' };
    expect(applyChange(on, { enabled: false }, now)).toEqual({ ...on, enabled: false, nextHeartbeat: null });
    // The defaults are on, every 3h: counted from the last heartbeat.
    expect(applyChange(on, 'reset', now)).toEqual({
      frequency: '3h',
      enabled: true,
      lastHeartbeat: on.lastHeartbeat,
      nextHeartbeat: '2030-06-01T14:00:00.000Z',
    });
  });

  it('spreads users over every due shard, each always on the same one', () => {
    const shards = new Set(Array.from({ length: 200 }, (_, i) => dueShardOf(`user-${i}`)));
    expect(shards.size).toBe(HEARTBEAT_DUE_SHARDS);
    expect(dueShardOf('user-1')).toBe(dueShardOf('user-1'));
  });
});
