import { randomBytes } from 'node:crypto';
import * as keys from '../keys';
import { tenant } from '../tenant';

/** The user's track library (track-archaeologist, setlist-oracle) and demo submissions (demo-submitter). */

export interface Track {
  trackId: string;
  title: string;
  artist: string;
  bpm: number;
  genre: string;
  mood?: string;
  key?: string;
  durationSeconds: number;
  addedAt: string;
}

export interface Demo {
  demoId: string;
  title: string;
  artist: string;
  recipient?: string;
  link?: string;
  status: 'submitted' | 'accepted' | 'rejected';
  submittedAt: string;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export async function addTracks(userId: string, tracks: Omit<Track, 'trackId' | 'addedAt'>[], now = new Date()): Promise<Track[]> {
  const stored = tracks.map((t) => ({ ...t, trackId: newId('trk'), addedAt: now.toISOString() }));
  await Promise.all(stored.map((t) => tenant(userId).put({ ...keys.track(userId, t.trackId), ...t })));
  return stored;
}

const trackView = ({ trackId, title, artist, bpm, genre, mood, key, durationSeconds, addedAt }: Track): Track => ({
  trackId,
  title,
  artist,
  bpm,
  genre,
  mood,
  key,
  durationSeconds,
  addedAt,
});

export async function listTracks(userId: string): Promise<Track[]> {
  return (await tenant(userId).queryAll<Track & Record<string, unknown>>(keys.trackPrefix)).map(trackView);
}

export async function deleteTrack(userId: string, trackId: string): Promise<boolean> {
  return !!(await tenant(userId).delete(keys.track(userId, trackId)));
}

export async function submitDemo(userId: string, demo: Omit<Demo, 'demoId' | 'status' | 'submittedAt'>, now = new Date()): Promise<Demo> {
  const stored: Demo = { ...demo, demoId: newId('demo'), status: 'submitted', submittedAt: now.toISOString() };
  await tenant(userId).put({ ...keys.demo(userId, `${stored.submittedAt}#${stored.demoId}`), ...stored }, { expression: 'attribute_not_exists(pk)' });
  return stored;
}

/** Newest first. */
export async function listDemos(userId: string): Promise<Demo[]> {
  const items = await tenant(userId).queryAll<Demo & Record<string, unknown>>(keys.demoPrefix);
  return items
    .reverse()
    .map(({ demoId, title, artist, recipient, link, status, submittedAt }) => ({ demoId, title, artist, recipient, link, status, submittedAt }));
}
