/**
 * The heartbeat function serves two EventBridge rules, told apart by the event they send: the
 * 5-minute sweep (health checks, stranded launches, channel posts) and the 1-minute sweep
 * (scheduled prompts, idle auto-stop), so per-minute schedules are punctual without running the
 * health checks five times as often. Locally one timer sends neither and runs both.
 */
export const FIVE_MINUTE_SWEEP = { sweep: 'five-minute' } as const;
export const MINUTE_SWEEP = { sweep: 'minute' } as const;
export type SweepKind = (typeof FIVE_MINUTE_SWEEP)['sweep'] | (typeof MINUTE_SWEEP)['sweep'];

/** Which parts an invocation runs: an event without a known `sweep` (the local timer) runs both. */
export function sweepsOf(event: unknown): { fiveMinute: boolean; minute: boolean } {
  const kind = (event as { sweep?: unknown } | null | undefined)?.sweep;
  return { fiveMinute: kind !== MINUTE_SWEEP.sweep, minute: kind !== FIVE_MINUTE_SWEEP.sweep };
}
