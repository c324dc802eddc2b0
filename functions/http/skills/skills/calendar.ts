import { calendarBodies as bodies } from '#contract/skill-actions/calendar';
import { type CalendarEvent, createCalendarEvent, deleteCalendarEvent, getCalendarEvent, listCalendarEvents, updateCalendarEvent } from '#data/skills/calendar';
import { newRecordId } from '#data/skills/records';
import { invalid, notFound } from '#platform/errors';
import { toIcs } from '../ics';
import { action, type SkillModule } from '#domain/skills/skill-module';

const iso = (instant: string) => new Date(instant).toISOString();
const missing = () => notFound('event not found');

const view = (e: CalendarEvent) => ({
  eventId: e.eventId,
  title: e.title,
  start: e.start,
  end: e.end,
  location: e.location ?? null,
  description: e.description ?? null,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

/** Events overlapping [from, to), soonest first. */
async function eventsIn(userId: string, from?: string, to?: string) {
  const all = await listCalendarEvents(userId);
  const fromMs = from ? Date.parse(from) : -Infinity;
  const toMs = to ? Date.parse(to) : Infinity;
  return all
    .filter((e) => Date.parse(e.end) > fromMs && Date.parse(e.start) < toMs)
    .sort((a, b) => a.start.localeCompare(b.start) || a.end.localeCompare(b.end));
}

/** Busy time within [from, to): the events clipped to the window, overlapping or touching ones merged. */
export function busyIntervals(events: { start: string; end: string }[], from: string, to: string) {
  const lo = Date.parse(from);
  const hi = Date.parse(to);
  const clipped = events
    .map((e) => [Math.max(lo, Date.parse(e.start)), Math.min(hi, Date.parse(e.end))] as const)
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, e] of clipped) {
    const last = merged.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  const free: [number, number][] = [];
  let cursor = lo;
  for (const [s, e] of merged) {
    if (s > cursor) free.push([cursor, s]);
    cursor = e;
  }
  if (cursor < hi) free.push([cursor, hi]);
  const out = (list: [number, number][]) => list.map(([s, e]) => ({ start: new Date(s).toISOString(), end: new Date(e).toISOString() }));
  return { busy: out(merged), free: out(free), busyMinutes: merged.reduce((n, [s, e]) => n + (e - s) / 60_000, 0) };
}

export const skill: SkillModule = {
  name: 'calendar',
  actions: {
    create_event: action(bodies().create_event, async (call, body) => {
      const at = call.now.toISOString();
      const event: CalendarEvent = {
        eventId: newRecordId('cal'),
        title: body.title,
        start: iso(body.start),
        end: iso(body.end),
        location: body.location || undefined,
        description: body.description || undefined,
        createdAt: at,
        updatedAt: at,
      };
      await createCalendarEvent(call.userId, event);
      return { event: view(event) };
    }),
    list_events: action(bodies().list_events, async (call, body) => {
      const events = await eventsIn(call.userId, body.from, body.to);
      return { events: events.map(view), count: events.length };
    }),
    get_event: action(bodies().get_event, async (call, body) => {
      const event = await getCalendarEvent(call.userId, body.eventId);
      if (!event) throw missing();
      return { event: view(event) };
    }),
    update_event: action(bodies().update_event, async (call, { action: _action, eventId, ...changes }) => {
      const current = await getCalendarEvent(call.userId, eventId);
      if (!current) throw missing();
      const start = changes.start ? iso(changes.start) : current.start;
      const end = changes.end ? iso(changes.end) : current.end;
      if (Date.parse(end) <= Date.parse(start)) throw invalid('end must be after start', 'INVALID_TIME_RANGE');
      const event = await updateCalendarEvent(call.userId, eventId, {
        title: changes.title,
        start,
        end,
        location: changes.location === '' ? null : changes.location,
        description: changes.description === '' ? null : changes.description,
        updatedAt: call.now.toISOString(),
      });
      if (!event) throw missing();
      return { event: view(event) };
    }),
    delete_event: action(bodies().delete_event, async (call, body) => {
      if (!(await deleteCalendarEvent(call.userId, body.eventId))) throw missing();
      return { deleted: body.eventId };
    }),
    free_busy: action(bodies().free_busy, async (call, body) => {
      const from = iso(body.from);
      const to = iso(body.to);
      return { from, to, ...busyIntervals(await eventsIn(call.userId, from, to), from, to) };
    }),
    export_ics: action(bodies().export_ics, async (call, body) => {
      const events = await eventsIn(call.userId, body.from, body.to);
      const ics = toIcs(
        events.map((e) => ({
          uid: `${e.eventId}@agent-platform`,
          start: new Date(e.start),
          end: new Date(e.end),
          summary: e.title,
          location: e.location,
          description: e.description,
          created: new Date(e.createdAt),
          lastModified: new Date(e.updatedAt),
        })),
        { prodId: '-//agent-platform//calendar skill//EN', calendarName: 'Agent calendar', now: call.now },
      );
      return { ics, contentType: 'text/calendar; charset=utf-8', filename: 'calendar.ics', count: events.length };
    }),
  },
};
