import * as z from 'zod';

/** Request bodies of the music skills: track-archaeologist, setlist-oracle, demo-submitter. */

const Text = z.string().trim().min(1).max(200);
const Bpm = z.number().positive().max(400);

/** Camelot wheel notation (1A-12B), the DJ's way to tell compatible keys. */
export const CamelotKey = z.string().regex(/^(1[0-2]|[1-9])[AB]$/, 'must be a Camelot key such as 8A or 11B');

export const TrackInput = z.strictObject({
  title: Text,
  artist: Text,
  bpm: Bpm,
  genre: Text,
  mood: Text.optional(),
  key: CamelotKey.optional(),
  durationSeconds: z
    .number()
    .int()
    .min(30)
    .max(4 * 3600),
});

const MAX_IMPORT = 100;

export const trackArchaeologistActions = {
  search: z.strictObject({
    action: z.literal('search'),
    bpm: Bpm.optional().describe('matches within `bpmTolerance` of this tempo'),
    bpmTolerance: z.number().nonnegative().max(50).default(3),
    bpmMin: Bpm.optional(),
    bpmMax: Bpm.optional(),
    genre: Text.optional().describe('case-insensitive, exact'),
    mood: Text.optional().describe('case-insensitive, exact'),
  }),
  add: z.strictObject({ action: z.literal('add'), track: TrackInput }),
  import: z.strictObject({ action: z.literal('import'), tracks: z.array(TrackInput).min(1).max(MAX_IMPORT) }),
  delete: z.strictObject({ action: z.literal('delete'), trackId: z.string().min(1).max(64) }),
};

export const setlistOracleActions = {
  build: z.strictObject({
    action: z.literal('build'),
    genre: Text.optional().describe('only tracks of this genre (case-insensitive)'),
    duration: z
      .number()
      .positive()
      .max(24 * 60)
      .describe('set length in minutes'),
  }),
};

export const demoSubmitterActions = {
  submit: z.strictObject({
    action: z.literal('submit'),
    title: Text,
    artist: Text,
    recipient: Text.optional().describe('the label or curator it is for'),
    link: z
      .url({ protocol: /^https$/ })
      .max(2000)
      .optional()
      .describe('where the demo can be heard'),
  }),
  list: z.strictObject({ action: z.literal('list'), status: z.enum(['submitted', 'accepted', 'rejected']).optional() }),
};
