/**
 * Heartbeat frequency arithmetic and defaults as plain code, for shared/db/heartbeat.ts: importing
 * them from ./metrics would put that contract, and its schema building, into every function that
 * reaches the heartbeat through the instance records (memory, agents, instance...).
 */
const UNIT_MINUTES = { m: 1, h: 60, d: 24 * 60 } as const;

/** `30m`, `3h`, `1d` → minutes; undefined when the text is not `<n>m|h|d`. */
export function frequencyMinutes(frequency: string): number | undefined {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(frequency);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MINUTES[m[2] as keyof typeof UNIT_MINUTES];
}

/** On by default: a check every 3 hours costs a running instance a few reads and writes (docs/architecture.md, heartbeat). */
export const HEARTBEAT_DEFAULTS = { frequency: '3h', enabled: true } as const;
