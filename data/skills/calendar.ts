import * as keys from '../keys';
import { createRecord, deleteRecord, getRecord, listRecords, updateRecord } from './records';

/** The calendar skill's events, at `USER#<id> / CALEVENT#<eventId>`; instants in UTC, an event occupies [start, end). */
export interface CalendarEvent extends Record<string, unknown> {
  eventId: string;
  title: string;
  start: string;
  end: string;
  location?: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
}

/** Stores a new event; its id must be new. */
export const createCalendarEvent = (userId: string, event: CalendarEvent) => createRecord(userId, keys.calendarEvent(userId, event.eventId), event);

export const getCalendarEvent = (userId: string, eventId: string) => getRecord<CalendarEvent>(userId, keys.calendarEvent(userId, eventId));

/** Sets the given fields of an existing event (undefined left alone, null removed); undefined when it is gone. */
export const updateCalendarEvent = (userId: string, eventId: string, fields: Record<string, unknown>) =>
  updateRecord<CalendarEvent>(userId, keys.calendarEvent(userId, eventId), fields);

/** The deleted event, or undefined when there was none. */
export const deleteCalendarEvent = (userId: string, eventId: string) => deleteRecord<CalendarEvent>(userId, keys.calendarEvent(userId, eventId));

export const listCalendarEvents = (userId: string) => listRecords<CalendarEvent>(userId, keys.calendarEventPrefix);
