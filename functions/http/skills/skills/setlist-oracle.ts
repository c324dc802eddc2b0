import { setlistOracleActions as bodies } from '#contract/skill-actions/music';
import { listTracks, type Track } from '#data/skills/music';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * How a set is built from the user's library:
 *
 * 1. Choice (fill the time as closely as possible): a 0/1 subset sum over track lengths in whole
 *    seconds. `reachedBy[s]` records the track that first made the total `s` reachable, processing
 *    tracks one by one and totals from high to low, so each track is used at most once. Totals up
 *    to target + the longest track are considered, so a set may run over when that is closer than
 *    any set under it; on a tie the shorter set wins (a DJ can stretch, not cut). O(tracks × seconds).
 * 2. Order (tempo and key): tracks are sorted by BPM, slowest first, so the set builds energy.
 *    Within a run of tracks no more than 3 BPM apart the order is free for the ear, so there each
 *    next track is the one whose Camelot key mixes best with the previous one: same key, then a
 *    neighbour on the wheel (±1 hour, same letter) or the relative key (same hour, other letter).
 *    Each transition reports whether its keys are compatible.
 */

const BPM_WINDOW = 3;

export function chooseTracks(tracks: Track[], targetSeconds: number): Track[] {
  const longest = Math.max(0, ...tracks.map((t) => t.durationSeconds));
  const limit = targetSeconds + longest;
  const reachedBy = new Int32Array(limit + 1).fill(-1);
  const reached = new Uint8Array(limit + 1);
  reached[0] = 1;
  tracks.forEach((t, i) => {
    for (let s = limit; s >= t.durationSeconds; s -= 1) {
      if (!reached[s] && reached[s - t.durationSeconds]) {
        reached[s] = 1;
        reachedBy[s] = i;
      }
    }
  });
  let best = 0;
  for (let s = 0; s <= limit; s += 1) {
    if (reached[s] && Math.abs(s - targetSeconds) < Math.abs(best - targetSeconds)) best = s;
  }
  const chosen: Track[] = [];
  for (let s = best; s > 0; s -= tracks[reachedBy[s]!]!.durationSeconds) chosen.push(tracks[reachedBy[s]!]!);
  return chosen;
}

const camelot = (key: string | undefined) => {
  const m = key ? /^(\d+)([AB])$/.exec(key) : null;
  return m ? { hour: Number(m[1]), letter: m[2]! } : undefined;
};

/** 0 = same key, 1 = a compatible neighbour or relative key, 2 = a clash (or a key unknown). */
export function keyDistance(from: string | undefined, to: string | undefined): number {
  const a = camelot(from);
  const b = camelot(to);
  if (!a || !b) return 2;
  if (a.hour === b.hour && a.letter === b.letter) return 0;
  const hourStep = Math.min((a.hour - b.hour + 12) % 12, (b.hour - a.hour + 12) % 12);
  if (a.letter === b.letter && hourStep === 1) return 1;
  if (a.hour === b.hour) return 1;
  return 2;
}

export function orderSet(tracks: Track[]): Track[] {
  const byTempo = [...tracks].sort((a, b) => a.bpm - b.bpm || a.title.localeCompare(b.title));
  const ordered: Track[] = [];
  while (byTempo.length) {
    const previous = ordered.at(-1);
    const window = byTempo.filter((t) => t.bpm - byTempo[0]!.bpm <= BPM_WINDOW);
    const next = previous ? window.reduce((best, t) => (keyDistance(previous.key, t.key) < keyDistance(previous.key, best.key) ? t : best)) : window[0]!;
    ordered.push(next);
    byTempo.splice(byTempo.indexOf(next), 1);
  }
  return ordered;
}

export const skill: SkillModule = {
  name: 'setlist-oracle',
  actions: {
    build: action(bodies().build, async (call, body) => {
      const library = await listTracks(call.userId);
      const pool = body.genre ? library.filter((t) => t.genre.toLowerCase() === body.genre!.toLowerCase()) : library;
      const targetSeconds = Math.round(body.duration * 60);
      const setlist = orderSet(chooseTracks(pool, targetSeconds));
      const totalSeconds = setlist.reduce((n, t) => n + t.durationSeconds, 0);
      return {
        setlist,
        count: setlist.length,
        targetMinutes: body.duration,
        totalSeconds,
        differenceSeconds: totalSeconds - targetSeconds,
        transitions: setlist.slice(1).map((t, i) => ({
          from: setlist[i]!.trackId,
          to: t.trackId,
          bpmChange: Math.round((t.bpm - setlist[i]!.bpm) * 100) / 100,
          keyCompatible: keyDistance(setlist[i]!.key, t.key) < 2,
        })),
        libraryTracks: pool.length,
      };
    }),
  },
};
