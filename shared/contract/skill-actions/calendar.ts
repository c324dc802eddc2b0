import * as z from 'zod';
import type { SkillActionBodies } from './index';

/** Longest window free/busy looks at. */
export const FREE_BUSY_MAX_DAYS = 366;

const EventId = z.string().regex(/^cal_[0-9a-f]{24}$/, 'an event id');
const Instant = z.iso.datetime({ offset: true });
const Title = z.string().trim().min(1).max(200);
const Location = z.string().trim().max(300);
const Description = z.string().max(10_000);
const endsAfterStart = (b: { start?: string; end?: string }) => !b.start || !b.end || Date.parse(b.end) > Date.parse(b.start);
const windowOrdered = (b: { from?: string; to?: string }) => !b.from || !b.to || Date.parse(b.to) > Date.parse(b.from);

export const calendarBodies = {
  create_event: z
    .strictObject({
      action: z.literal('create_event'),
      title: Title,
      start: Instant,
      end: Instant,
      location: Location.optional(),
      description: Description.optional(),
    })
    .refine(endsAfterStart, { message: 'end must be after start', path: ['end'] }),
  list_events: z
    .strictObject({ action: z.literal('list_events'), from: Instant.optional(), to: Instant.optional() })
    .refine(windowOrdered, { message: 'to must be after from', path: ['to'] })
    .describe('events overlapping [from, to), soonest first'),
  get_event: z.strictObject({ action: z.literal('get_event'), eventId: EventId }),
  update_event: z
    .strictObject({
      action: z.literal('update_event'),
      eventId: EventId,
      title: Title.optional(),
      start: Instant.optional(),
      end: Instant.optional(),
      location: Location.nullable().optional().describe('null removes it'),
      description: Description.nullable().optional().describe('null removes it'),
    })
    .refine(endsAfterStart, { message: 'end must be after start', path: ['end'] }),
  delete_event: z.strictObject({ action: z.literal('delete_event'), eventId: EventId }),
  free_busy: z
    .strictObject({ action: z.literal('free_busy'), from: Instant, to: Instant })
    .refine(windowOrdered, { message: 'to must be after from', path: ['to'] })
    .refine((b) => Date.parse(b.to) - Date.parse(b.from) <= FREE_BUSY_MAX_DAYS * 86_400_000, { message: `at most ${FREE_BUSY_MAX_DAYS} days`, path: ['to'] })
    .describe('busy intervals (overlapping events merged) and the free gaps between them within [from, to)'),
  export_ics: z
    .strictObject({ action: z.literal('export_ics'), from: Instant.optional(), to: Instant.optional() })
    .refine(windowOrdered, { message: 'to must be after from', path: ['to'] })
    .describe('the events as an RFC 5545 iCalendar document'),
};

export const calendarActions: SkillActionBodies = {
  bodies: calendarBodies,
  example: { action: 'create_event', title: 'Soundcheck', start: '2026-07-12T16:00:00Z', end: '2026-07-12T17:00:00Z', location: 'Band on the Wall' },
};
