import { describe, expect, it } from 'vitest';
import { LIBRARY } from './music-library';
import { expectRefused, skillOk, skillUser } from './skills-helpers';

const titles = (body: { tracks: { title: string }[] }) => body.tracks.map((t) => t.title);

describe('track-archaeologist skill', () => {
  it('imports a library and searches it by tempo, range, genre and mood', async () => {
    const user = await skillUser();
    const imported = await skillOk(user, 'track-archaeologist', { action: 'import', tracks: LIBRARY });
    expect(imported.imported).toBe(11);
    // 125 ± 3 → 122..128: C 122, D 124, L 124, E 126, F 128.
    expect(titles(await skillOk(user, 'track-archaeologist', { action: 'search', bpm: 125 }))).toEqual(['C', 'D', 'L', 'E', 'F']);
    expect(titles(await skillOk(user, 'track-archaeologist', { action: 'search', bpm: 125, bpmTolerance: 0 }))).toEqual([]);
    expect(titles(await skillOk(user, 'track-archaeologist', { action: 'search', bpmMin: 130, bpmMax: 134 }))).toEqual(['G', 'H', 'I']);
    expect(titles(await skillOk(user, 'track-archaeologist', { action: 'search', genre: 'house' }))).toEqual(['L']);
    expect(titles(await skillOk(user, 'track-archaeologist', { action: 'search', genre: 'techno', mood: 'dark' }))).toEqual(['A', 'C']);
    expect((await skillOk(user, 'track-archaeologist', { action: 'search' })).count).toBe(11);
  });

  it('adds and deletes one track; another user never sees it', async () => {
    const user = await skillUser();
    const other = await skillUser();
    const { track } = await skillOk(user, 'track-archaeologist', { action: 'add', track: LIBRARY[0] });
    expect(track).toMatchObject({ title: 'A', bpm: 120, durationSeconds: 360 });
    expect((await skillOk(other, 'track-archaeologist', { action: 'search' })).count).toBe(0);
    const { callSkill } = await import('./skills-helpers');
    expect((await callSkill(other, 'track-archaeologist', { action: 'delete', trackId: track.trackId })).status).toBe(404);
    await skillOk(user, 'track-archaeologist', { action: 'delete', trackId: track.trackId });
    expect((await skillOk(user, 'track-archaeologist', { action: 'search' })).count).toBe(0);
  });

  it('finds nothing in an empty account', async () => {
    const user = await skillUser();
    expect(await skillOk(user, 'track-archaeologist', { action: 'search', bpm: 124 })).toEqual({ success: true, tracks: [], count: 0 });
  });

  it('refuses invalid bodies for each action', async () => {
    const user = await skillUser();
    await expectRefused(user, 'track-archaeologist', [
      { action: 'search', bpm: 'fast' },
      { action: 'search', tempo: 120 },
      { action: 'add', track: { title: 'x', artist: 'y', bpm: 120, genre: 'techno' } },
      { action: 'add', track: { ...LIBRARY[0], key: 'C#m' } },
      { action: 'import', tracks: [] },
      { action: 'delete' },
      { action: 'dig' },
      {},
    ]);
  });
});
