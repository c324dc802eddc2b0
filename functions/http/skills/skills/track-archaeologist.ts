import { trackArchaeologistActions as bodies } from '#contract/skill-actions/music';
import { addTracks, deleteTrack, listTracks, type Track } from '#data/skills/music';
import { notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

const same = (a: string | undefined, b: string | undefined) => b === undefined || (a ?? '').toLowerCase() === b.toLowerCase();

/** Tracks of the library that match every filter given; sorted by tempo, then title. */
export function searchTracks(
  tracks: Track[],
  f: { bpm?: number; bpmTolerance: number; bpmMin?: number; bpmMax?: number; genre?: string; mood?: string },
): Track[] {
  return tracks
    .filter((t) => f.bpm === undefined || Math.abs(t.bpm - f.bpm) <= f.bpmTolerance)
    .filter((t) => (f.bpmMin === undefined || t.bpm >= f.bpmMin) && (f.bpmMax === undefined || t.bpm <= f.bpmMax))
    .filter((t) => same(t.genre, f.genre) && same(t.mood, f.mood))
    .sort((a, b) => a.bpm - b.bpm || a.title.localeCompare(b.title));
}

export const skill: SkillModule = {
  name: 'track-archaeologist',
  actions: {
    search: action(bodies().search, async (call, { action: _a, ...filters }) => {
      const tracks = searchTracks(await listTracks(call.userId), filters);
      return { tracks, count: tracks.length };
    }),
    add: action(bodies().add, async (call, body) => ({ track: (await addTracks(call.userId, [body.track], call.now))[0] })),
    import: action(bodies().import, async (call, body) => {
      const tracks = await addTracks(call.userId, body.tracks, call.now);
      return { imported: tracks.length, tracks };
    }),
    delete: action(bodies().delete, async (call, body) => {
      if (!(await deleteTrack(call.userId, body.trackId))) throw notFound('no such track');
      return { deleted: body.trackId };
    }),
  },
};
