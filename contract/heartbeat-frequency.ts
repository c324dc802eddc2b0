/*
 * Plain values of the heartbeat settings, apart from the metrics group's schemas: data/heartbeat.ts
 * reads them for every instance record, and importing the schemas put the metrics contract (its code
 * and its zod schemas built at init) into every function that touches an instance.
 */

/** Heartbeat frequency bounds: no more often than every 5 minutes (the schedule's own period), at least every 30 days. */
export const HEARTBEAT_MIN_MINUTES = 5;
export const HEARTBEAT_MAX_MINUTES = 30 * 24 * 60;
const UNIT_MINUTES = { m: 1, h: 60, d: 24 * 60 } as const;

/** `30m`, `3h`, `1d` → minutes; undefined when the text is not `<n>m|h|d`. */
export function frequencyMinutes(frequency: string): number | undefined {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(frequency);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MINUTES[m[2] as keyof typeof UNIT_MINUTES];
}

/** On by default: a check every 3 hours costs a running instance a few reads and writes (docs/architecture.md, heartbeat). */
export const HEARTBEAT_DEFAULTS = { frequency: '3h', enabled: true } as const;
