import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/notes-workspace';
import { newTestUserId, runSkill } from '../helpers/skill-call';

async function seed(userId: string) {
  const made = [];
  for (const note of [
    { title: 'Tech rider', content: 'Two CDJ-3000 and a DJM-900. Rider must be confirmed.', tags: ['tour'] },
    { title: 'Tour budget', content: 'Flights, hotels, rider costs, rider extras.', tags: ['Tour', 'money'] },
    { title: 'Groceries', content: 'milk' },
  ]) {
    made.push((await runSkill(skill, userId, { action: 'create_note', ...note })).body.note);
  }
  return made;
}

describe('notes-workspace', () => {
  it('creates, reads, updates, lists and deletes notes', async () => {
    const userId = newTestUserId();
    const created = await runSkill(skill, userId, { action: 'create_note', title: 'Setlist ideas', content: 'open with ambient', tags: ['music', 'music'] });
    expect(created.status).toBe(200);
    expect(created.body.note).toMatchObject({ title: 'Setlist ideas', content: 'open with ambient', tags: ['music'] });
    const noteId = created.body.note.noteId;
    const updated = await runSkill(skill, userId, { action: 'update_note', noteId, content: 'open with acid' }, { now: new Date(Date.now() + 1000) });
    expect(updated.body.note).toMatchObject({ title: 'Setlist ideas', content: 'open with acid' });
    expect(updated.body.note.updatedAt > created.body.note.updatedAt).toBe(true);
    expect((await runSkill(skill, userId, { action: 'get_note', noteId })).body.note.content).toBe('open with acid');
    expect((await runSkill(skill, userId, { action: 'list_notes', tag: 'music' })).body.count).toBe(1);
    expect((await runSkill(skill, userId, { action: 'delete_note', noteId })).body.deleted).toBe(noteId);
    expect((await runSkill(skill, userId, { action: 'get_note', noteId })).status).toBe(404);
    expect((await runSkill(skill, userId, { action: 'delete_note', noteId })).status).toBe(404);
    expect((await runSkill(skill, userId, { action: 'update_note', noteId, title: 'back' })).status).toBe(404);
  });

  it('search needs every word and ranks by the documented weights (worked by hand)', async () => {
    const userId = newTestUserId();
    const [rider, budget] = await seed(userId);
    // "rider": Tech rider = title 1x3 + content 1 = 4; Tour budget = content 2 = 2.
    const one = await runSkill(skill, userId, { action: 'search', query: 'Rider' });
    expect(one.body.results.map((r: any) => [r.noteId, r.score])).toEqual([
      [rider.noteId, 4],
      [budget.noteId, 2],
    ]);
    expect(one.body.results[0].snippet).toContain('Rider must be confirmed');
    // "rider tour": Tech rider = 4 + tag 1x2 = 6; Tour budget = 2 + title 1x3 + tag 1x2 = 7.
    const two = await runSkill(skill, userId, { action: 'search', query: 'rider tour' });
    expect(two.body.results.map((r: any) => [r.noteId, r.score])).toEqual([
      [budget.noteId, 7],
      [rider.noteId, 6],
    ]);
    expect((await runSkill(skill, userId, { action: 'search', query: 'milk rider' })).body.count).toBe(0);
    expect((await runSkill(skill, userId, { action: 'search', query: 'rider', tag: 'money' })).body.count).toBe(1);
  });

  it('an empty account lists and finds nothing, and another user reaches none of the notes', async () => {
    const owner = newTestUserId();
    const [rider] = await seed(owner);
    const intruder = newTestUserId();
    expect((await runSkill(skill, intruder, { action: 'list_notes' })).body).toEqual({ success: true, notes: [], count: 0 });
    expect((await runSkill(skill, intruder, { action: 'search', query: 'rider' })).body.results).toEqual([]);
    expect((await runSkill(skill, intruder, { action: 'get_note', noteId: rider.noteId })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'update_note', noteId: rider.noteId, title: 'mine now' })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'delete_note', noteId: rider.noteId })).status).toBe(404);
    expect((await runSkill(skill, owner, { action: 'get_note', noteId: rider.noteId })).body.note.title).toBe('Tech rider');
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'create_note', content: 'no title' },
      { action: 'create_note', title: 'x', content: 'y'.repeat(100_001) },
      { action: 'get_note', noteId: '../../etc' },
      { action: 'update_note', noteId: 'note_000000000000000000000000', owner: 'me' },
      { action: 'delete_note' },
      { action: 'list_notes', tag: '' },
      { action: 'search', query: '   ' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
  });
});
