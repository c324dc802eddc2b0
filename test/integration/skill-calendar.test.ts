import { describe, expect, it } from 'vitest';
import { escapeText } from '#functions/http/skills/ics';
import { skill } from '#functions/http/skills/skills/calendar';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const create = (userId: string, title: string, start: string, end: string, extra: Record<string, unknown> = {}) =>
  runSkill(skill, userId, { action: 'create_event', title, start, end, ...extra });

/** RFC 5545 3.1: unfolding removes every CRLF followed by one space. */
const unfold = (ics: string) => ics.replace(/\r\n /g, '');

describe('calendar', () => {
  it('creates, reads, updates, lists by window and deletes events', async () => {
    const userId = newTestUserId();
    const made = await create(userId, 'Soundcheck', '2026-07-12T18:00:00+02:00', '2026-07-12T19:00:00+02:00', { location: 'Band on the Wall' });
    expect(made.status).toBe(200);
    expect(made.body.event).toMatchObject({
      title: 'Soundcheck',
      start: '2026-07-12T16:00:00.000Z',
      end: '2026-07-12T17:00:00.000Z',
      location: 'Band on the Wall',
    });
    const eventId = made.body.event.eventId;
    await create(userId, 'Later show', '2026-08-01T20:00:00Z', '2026-08-01T23:00:00Z');
    const july = await runSkill(skill, userId, { action: 'list_events', from: '2026-07-01T00:00:00Z', to: '2026-08-01T00:00:00Z' });
    expect(july.body.events.map((e: any) => e.title)).toEqual(['Soundcheck']);
    expect((await runSkill(skill, userId, { action: 'list_events' })).body.count).toBe(2);

    const moved = await runSkill(skill, userId, { action: 'update_event', eventId, end: '2026-07-12T17:30:00Z', location: null });
    expect(moved.body.event).toMatchObject({ start: '2026-07-12T16:00:00.000Z', end: '2026-07-12T17:30:00.000Z', location: null });
    const backwards = await runSkill(skill, userId, { action: 'update_event', eventId, end: '2026-07-12T15:00:00Z' });
    expect(backwards.status).toBe(400);
    expect((await runSkill(skill, userId, { action: 'get_event', eventId })).body.event.end).toBe('2026-07-12T17:30:00.000Z');
    expect((await runSkill(skill, userId, { action: 'delete_event', eventId })).body.deleted).toBe(eventId);
    expect((await runSkill(skill, userId, { action: 'get_event', eventId })).status).toBe(404);
  });

  it('free/busy merges overlapping and touching events and clips them to the window (worked by hand)', async () => {
    const userId = newTestUserId();
    await create(userId, 'A', '2026-07-01T09:00:00Z', '2026-07-01T10:00:00Z');
    await create(userId, 'B', '2026-07-01T09:30:00Z', '2026-07-01T11:00:00Z');
    await create(userId, 'C', '2026-07-01T11:00:00Z', '2026-07-01T11:30:00Z');
    await create(userId, 'D', '2026-07-01T13:00:00Z', '2026-07-01T14:00:00Z');
    await create(userId, 'E overnight', '2026-06-30T23:00:00Z', '2026-07-01T08:30:00Z');
    await create(userId, 'F outside', '2026-07-02T09:00:00Z', '2026-07-02T10:00:00Z');
    const res = await runSkill(skill, userId, { action: 'free_busy', from: '2026-07-01T08:00:00Z', to: '2026-07-01T18:00:00Z' });
    expect(res.status).toBe(200);
    const t = (hm: string) => `2026-07-01T${hm}:00.000Z`;
    expect(res.body.busy).toEqual([
      { start: t('08:00'), end: t('08:30') },
      { start: t('09:00'), end: t('11:30') },
      { start: t('13:00'), end: t('14:00') },
    ]);
    expect(res.body.free).toEqual([
      { start: t('08:30'), end: t('09:00') },
      { start: t('11:30'), end: t('13:00') },
      { start: t('14:00'), end: t('18:00') },
    ]);
    expect(res.body.busyMinutes).toBe(240);
  });

  it('exports RFC 5545 text: CRLF, escaped TEXT, lines folded at 75 octets without splitting characters', async () => {
    const userId = newTestUserId();
    const summary = 'Album launch — Ölüdeniz beach party with the whole crew, sound system and a very long title ✨';
    const description = 'Bring: cables; adapters, spare USB\nDoors 20:00 \\ curfew 02:00';
    await create(userId, summary, '2026-09-12T18:30:00Z', '2026-09-12T23:00:00Z', { description, location: 'Beach, Ölüdeniz' });
    const res = await runSkill(skill, userId, { action: 'export_ics' }, { now: new Date('2026-09-01T10:00:00Z') });
    expect(res.status).toBe(200);
    const ics: string = res.body.ics;
    expect(res.body).toMatchObject({ count: 1, contentType: 'text/calendar; charset=utf-8' });
    expect(ics.startsWith('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:')).toBe(true);
    expect(ics.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(ics.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    for (const line of ics.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    expect(ics).not.toContain('\uFFFD');
    const lines = unfold(ics).split('\r\n');
    expect(lines).toContain(`SUMMARY:${summary.replace(/,/g, '\\,')}`);
    expect(lines).toContain('DESCRIPTION:Bring: cables\\; adapters\\, spare USB\\nDoors 20:00 \\\\ curfew 02:00');
    expect(lines).toContain('LOCATION:Beach\\, Ölüdeniz');
    expect(lines).toContain('DTSTART:20260912T183000Z');
    expect(lines).toContain('DTEND:20260912T230000Z');
    expect(lines).toContain('DTSTAMP:20260901T100000Z');
    expect(lines.filter((l) => l === 'BEGIN:VEVENT')).toHaveLength(1);
    expect(escapeText('a;b,c\\d\r\ne')).toBe('a\\;b\\,c\\\\d\\ne');
  });

  it('an empty account has no events, all free time and an empty calendar; another user reaches none', async () => {
    const owner = newTestUserId();
    const made = await create(owner, 'Private', '2026-07-01T09:00:00Z', '2026-07-01T10:00:00Z');
    const intruder = newTestUserId();
    expect((await runSkill(skill, intruder, { action: 'list_events' })).body).toEqual({ success: true, events: [], count: 0 });
    const fb = await runSkill(skill, intruder, { action: 'free_busy', from: '2026-07-01T00:00:00Z', to: '2026-07-02T00:00:00Z' });
    expect(fb.body).toMatchObject({ busy: [], free: [{ start: '2026-07-01T00:00:00.000Z', end: '2026-07-02T00:00:00.000Z' }], busyMinutes: 0 });
    const ics = await runSkill(skill, intruder, { action: 'export_ics' });
    expect(ics.body.count).toBe(0);
    expect(ics.body.ics).not.toContain('BEGIN:VEVENT');
    const eventId = made.body.event.eventId;
    expect((await runSkill(skill, intruder, { action: 'get_event', eventId })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'update_event', eventId, title: 'x' })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'delete_event', eventId })).status).toBe(404);
    expect((await runSkill(skill, owner, { action: 'get_event', eventId })).body.event.title).toBe('Private');
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'create_event', title: 'x', start: '2026-07-01T10:00:00Z', end: '2026-07-01T09:00:00Z' },
      { action: 'create_event', title: 'x', start: 'tomorrow', end: '2026-07-01T09:00:00Z' },
      { action: 'list_events', from: '2026-07-02T00:00:00Z', to: '2026-07-01T00:00:00Z' },
      { action: 'get_event', eventId: 'nope' },
      { action: 'update_event', eventId: 'cal_000000000000000000000000', userId: 'x' },
      { action: 'delete_event' },
      { action: 'free_busy', from: '2026-01-01T00:00:00Z' },
      { action: 'free_busy', from: '2026-01-01T00:00:00Z', to: '2028-01-01T00:00:00Z' },
      { action: 'export_ics', format: 'csv' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
  });
});
