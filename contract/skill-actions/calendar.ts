import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

/** Longest window free/busy looks at. */
export const FREE_BUSY_MAX_DAYS = 366;

const EventId = lazySchema(() => z.string().check(z.regex(/^cal_[0-9a-f]{24}$/, 'an event id')));
const Instant = lazySchema(() => z.iso.datetime({ offset: true }));
const Title = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));
const Location = lazySchema(() => z.string().check(z.trim(), z.maxLength(300)));
const Description = lazySchema(() => z.string().check(z.maxLength(10_000)));
const endsAfterStart = (b: { start?: string; end?: string }) => !b.start || !b.end || Date.parse(b.end) > Date.parse(b.start);
const windowOrdered = (b: { from?: string; to?: string }) => !b.from || !b.to || Date.parse(b.to) > Date.parse(b.from);

export const calendarBodies = lazySchema(() => ({
  create_event: z
    .strictObject({
      action: z.literal('create_event'),
      title: Title(),
      start: Instant(),
      end: Instant(),
      location: z.optional(Location()),
      description: z.optional(Description()),
    })
    .check(z.refine(endsAfterStart, { message: 'end must be after start', path: ['end'] })),
  list_events: z
    .strictObject({ action: z.literal('list_events'), from: z.optional(Instant()), to: z.optional(Instant()) })
    .check(z.refine(windowOrdered, { message: 'to must be after from', path: ['to'] }), z.describe('events overlapping [from, to), soonest first')),
  get_event: z.strictObject({ action: z.literal('get_event'), eventId: EventId() }),
  update_event: z
    .strictObject({
      action: z.literal('update_event'),
      eventId: EventId(),
      title: z.optional(Title()),
      start: z.optional(Instant()),
      end: z.optional(Instant()),
      location: z.optional(z.nullable(Location())).check(z.describe('null removes it')),
      description: z.optional(z.nullable(Description())).check(z.describe('null removes it')),
    })
    .check(z.refine(endsAfterStart, { message: 'end must be after start', path: ['end'] })),
  delete_event: z.strictObject({ action: z.literal('delete_event'), eventId: EventId() }),
  free_busy: z.strictObject({ action: z.literal('free_busy'), from: Instant(), to: Instant() }).check(
    z.refine(windowOrdered, { message: 'to must be after from', path: ['to'] }),
    z.refine((b) => Date.parse(b.to) - Date.parse(b.from) <= FREE_BUSY_MAX_DAYS * 86_400_000, { message: `at most ${FREE_BUSY_MAX_DAYS} days`, path: ['to'] }),
    z.describe('busy intervals (overlapping events merged) and the free gaps between them within [from, to)'),
  ),
  export_ics: z
    .strictObject({ action: z.literal('export_ics'), from: z.optional(Instant()), to: z.optional(Instant()) })
    .check(z.refine(windowOrdered, { message: 'to must be after from', path: ['to'] }), z.describe('the events as an RFC 5545 iCalendar document')),
}));

export const calendarActions: SkillActionBodies = {
  bodies: calendarBodies,
  example: { action: 'create_event', title: 'Soundcheck', start: '2026-07-12T16:00:00Z', end: '2026-07-12T17:00:00Z', location: 'Band on the Wall' },
};
