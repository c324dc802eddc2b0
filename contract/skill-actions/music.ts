import * as z from 'zod/mini';
import { lazySchema } from '../route';

/** Request bodies of the music skills: track-archaeologist, setlist-oracle, demo-submitter. */

const Text = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));
const Bpm = lazySchema(() => z.number().check(z.positive(), z.maximum(400)));

/** Camelot wheel notation (1A-12B), the DJ's way to tell compatible keys. */
export const CamelotKey = lazySchema(() => z.string().check(z.regex(/^(1[0-2]|[1-9])[AB]$/, 'must be a Camelot key such as 8A or 11B')));

export const TrackInput = lazySchema(() =>
  z.strictObject({
    title: Text(),
    artist: Text(),
    bpm: Bpm(),
    genre: Text(),
    mood: z.optional(Text()),
    key: z.optional(CamelotKey()),
    durationSeconds: z.number().check(z.int(), z.minimum(30), z.maximum(4 * 3600)),
  }),
);

const MAX_IMPORT = 100;

export const trackArchaeologistActions = lazySchema(() => ({
  search: z.strictObject({
    action: z.literal('search'),
    bpm: z.optional(Bpm()).check(z.describe('matches within `bpmTolerance` of this tempo')),
    bpmTolerance: z._default(z.number().check(z.nonnegative(), z.maximum(50)), 3),
    bpmMin: z.optional(Bpm()),
    bpmMax: z.optional(Bpm()),
    genre: z.optional(Text()).check(z.describe('case-insensitive, exact')),
    mood: z.optional(Text()).check(z.describe('case-insensitive, exact')),
  }),
  add: z.strictObject({ action: z.literal('add'), track: TrackInput() }),
  import: z.strictObject({ action: z.literal('import'), tracks: z.array(TrackInput()).check(z.minLength(1), z.maxLength(MAX_IMPORT)) }),
  delete: z.strictObject({ action: z.literal('delete'), trackId: z.string().check(z.minLength(1), z.maxLength(64)) }),
}));

export const setlistOracleActions = lazySchema(() => ({
  build: z.strictObject({
    action: z.literal('build'),
    genre: z.optional(Text()).check(z.describe('only tracks of this genre (case-insensitive)')),
    duration: z.number().check(z.positive(), z.maximum(24 * 60), z.describe('set length in minutes')),
  }),
}));

export const demoSubmitterActions = lazySchema(() => ({
  submit: z.strictObject({
    action: z.literal('submit'),
    title: Text(),
    artist: Text(),
    recipient: z.optional(Text()).check(z.describe('the label or curator it is for')),
    link: z.optional(z.url({ protocol: /^https$/ }).check(z.maxLength(2000))).check(z.describe('where the demo can be heard')),
  }),
  list: z.strictObject({ action: z.literal('list'), status: z.optional(z.enum(['submitted', 'accepted', 'rejected'])) }),
}));
