import { describe, expect, it } from 'vitest';
import { LIBRARY } from './music-library';
import { expectRefused, skillOk, skillUser } from './skills-helpers';

describe('setlist-oracle skill', () => {
  it('fills 90 minutes exactly from the library, ordered by tempo with key-compatible neighbours (worked by hand)', async () => {
    const user = await skillUser();
    await skillOk(user, 'track-archaeologist', { action: 'import', tracks: LIBRARY });
    const set = await skillOk(user, 'setlist-oracle', { action: 'build', genre: 'techno', duration: 90 });
    // Only A-I sum to 5400 s (see music-library.ts). Order: A first (slowest); within 3 BPM of the
    // slowest left the best key follows: A 8A → D 8A (same key) → B 9A → C 8B → E 10A → F 9A → G 9B → H 10A → I 11A.
    expect(set.setlist.map((t: { title: string }) => t.title)).toEqual(['A', 'D', 'B', 'C', 'E', 'F', 'G', 'H', 'I']);
    expect(set).toMatchObject({ count: 9, totalSeconds: 5400, differenceSeconds: 0, targetMinutes: 90, libraryTracks: 10 });
    expect(set.transitions.map((t: { keyCompatible: boolean }) => t.keyCompatible)).toEqual([true, true, false, false, true, true, false, true]);
    expect(set.transitions[0].bpmChange).toBe(4);
  });

  it('comes as close as it can when nothing fits exactly', async () => {
    const user = await skillUser();
    await skillOk(user, 'track-archaeologist', { action: 'import', tracks: LIBRARY.filter((t) => ['A', 'B', 'K'].includes(t.title)) });
    // 10 minutes = 600 s from 360, 450, 300: 660 (A+K, 60 over) is closer than 450 (150 under).
    const set = await skillOk(user, 'setlist-oracle', { action: 'build', duration: 10 });
    expect(set.totalSeconds).toBe(660);
    expect(set.setlist.map((t: { title: string }) => t.title).sort()).toEqual(['A', 'K']);
  });

  it('gives an empty set on an empty library', async () => {
    const user = await skillUser();
    const set = await skillOk(user, 'setlist-oracle', { action: 'build', duration: 60 });
    expect(set).toMatchObject({ setlist: [], count: 0, totalSeconds: 0, libraryTracks: 0 });
  });

  it('refuses invalid bodies', async () => {
    const user = await skillUser();
    await expectRefused(user, 'setlist-oracle', [
      { action: 'build' },
      { action: 'build', duration: 'long' },
      { action: 'build', duration: 90, extra: 1 },
      { action: 'shuffle', duration: 90 },
    ]);
  });

  it('needs an active subscription', async () => {
    const { testSession, call } = await import('../helpers/api');
    const user = await testSession();
    const res = await call('POST', '/api/skills/setlist-oracle', { session: user, body: { action: 'build', duration: 90 } });
    expect(res.status).toBe(402);
  });
});
