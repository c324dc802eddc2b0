/**
 * A five-field cron expression in UTC (`minute hour day-of-month month day-of-week`), as crontab(5)
 * reads it: `*`, numbers, ranges `a-b`, steps `*\/n` and `a-b/n`, lists `a,b`; day of week 0-7
 * (0 and 7 are Sunday). When both day fields are restricted a day matching either runs (crontab's
 * rule). No names, no seconds, no time zones: schedules are UTC. Written here because no cron
 * library is installed (the lead may swap in `cron-parser`).
 */

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

export interface CronSchedule {
  minutes: Set<number>;
  hours: Set<number>;
  daysOfMonth: Set<number>;
  months: Set<number>;
  daysOfWeek: Set<number>;
  /** Whether each day field was restricted (not `*`): with both, either may match. */
  domRestricted: boolean;
  dowRestricted: boolean;
}

export class CronError extends Error {}

function parseField(text: string, field: (typeof FIELDS)[number]): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match) throw new CronError(`bad ${field.name} field: ${text}`);
    const [, whole, from, to, step] = match;
    const start = whole === '*' ? field.min : Number(from);
    const end = whole === '*' ? field.max : to !== undefined ? Number(to) : step !== undefined ? field.max : start;
    const by = step === undefined ? 1 : Number(step);
    if (start < field.min || end > field.max || start > end || by < 1) throw new CronError(`${field.name} out of range: ${part}`);
    for (let v = start; v <= end; v += by) values.add(v);
  }
  return values;
}

export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError('a cron expression has five fields: minute hour day-of-month month day-of-week');
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = parts.map((p, i) => parseField(p, FIELDS[i]!)) as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ];
  if (daysOfWeek.has(7)) daysOfWeek.add(0);
  const schedule = { minutes, hours, daysOfMonth, months, daysOfWeek, domRestricted: parts[2] !== '*', dowRestricted: parts[4] !== '*' };
  if (!nextCronTime(schedule, new Date(Date.UTC(2000, 0, 1)))) throw new CronError(`${expression} never runs`);
  return schedule;
}

function dayMatches(s: CronSchedule, t: Date): boolean {
  const dom = s.daysOfMonth.has(t.getUTCDate());
  const dow = s.daysOfWeek.has(t.getUTCDay());
  if (s.domRestricted && s.dowRestricted) return dom || dow;
  return dom && dow;
}

/** Enough to pass every leap-day expression (a 29 February on a given weekday recurs within 28 years). */
const SEARCH_YEARS = 30;

/** The first minute strictly after `after` that the schedule runs at; undefined when it never does. */
export function nextCronTime(s: CronSchedule, after: Date): Date | undefined {
  const t = new Date(Math.floor(after.getTime() / 60_000) * 60_000 + 60_000);
  const limit = after.getTime() + SEARCH_YEARS * 366 * 86_400_000;
  while (t.getTime() <= limit) {
    if (!s.months.has(t.getUTCMonth() + 1)) {
      t.setUTCMonth(t.getUTCMonth() + 1, 1);
      t.setUTCHours(0, 0, 0, 0);
    } else if (!dayMatches(s, t)) {
      t.setUTCDate(t.getUTCDate() + 1);
      t.setUTCHours(0, 0, 0, 0);
    } else if (!s.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
    } else if (!s.minutes.has(t.getUTCMinutes())) {
      t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
    } else return t;
  }
  return undefined;
}
