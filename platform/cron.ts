import type { Cron } from 'croner';
import { DomainError } from './errors';

/**
 * A five-field cron expression in UTC (`minute hour day-of-month month day-of-week`), read by
 * croner: `*`, numbers, ranges, steps, lists, names (`MON`, `JAN`), `L` and `#`; day of week 0-7
 * (0 and 7 are Sunday). When both day fields are restricted a day matching either runs (crontab's
 * rule, croner's default). No seconds and no time zones: schedules are UTC. croner is imported on
 * the first parse (./lazy/croner.ts), so the routes and ticks that touch no schedule never load it.
 */
export type CronSchedule = Cron;

/** A cron expression that does not parse or never fires: the caller's schedule is not valid. */
export class CronError extends DomainError {
  constructor(message: string) {
    super('invalid', message, 'INVALID_SCHEDULE');
  }
}

/** Schedules stored before croner may use `10/20` (from 10, every 20), which croner calls sloppy. */
const CRON_OPTIONS = { timezone: 'UTC', mode: '5-part', sloppyRanges: true, paused: true } as const;

export async function parseCron(expression: string): Promise<CronSchedule> {
  const { Cron } = await import('./lazy/croner');
  let schedule: Cron;
  try {
    schedule = new Cron(expression.trim(), CRON_OPTIONS);
  } catch (err) {
    throw new CronError(err instanceof Error ? err.message : String(err));
  }
  if (!schedule.nextRun(new Date(Date.UTC(2000, 0, 1)))) throw new CronError(`${expression} never runs`);
  return schedule;
}

/** The first minute strictly after `after` that the schedule runs at; undefined when it never does. */
export function nextCronTime(schedule: CronSchedule, after: Date): Date | undefined {
  return schedule.nextRun(after) ?? undefined;
}
