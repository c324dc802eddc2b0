import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

export const NOTE_CONTENT_MAX_CHARS = 100_000;

const NoteId = lazySchema(() => z.string().check(z.regex(/^note_[0-9a-f]{24}$/, 'a note id')));
const Title = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));
const Content = lazySchema(() => z.string().check(z.maxLength(NOTE_CONTENT_MAX_CHARS)));
const Tag = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(50), z.toLowerCase()));
const Tags = lazySchema(() => z.array(Tag()).check(z.maxLength(20)));

export const notesWorkspaceBodies = lazySchema(() => ({
  create_note: z.strictObject({ action: z.literal('create_note'), title: Title(), content: z._default(Content(), ''), tags: z._default(Tags(), []) }),
  get_note: z.strictObject({ action: z.literal('get_note'), noteId: NoteId() }),
  update_note: z.strictObject({
    action: z.literal('update_note'),
    noteId: NoteId(),
    title: z.optional(Title()),
    content: z.optional(Content()),
    tags: z.optional(Tags()),
  }),
  delete_note: z.strictObject({ action: z.literal('delete_note'), noteId: NoteId() }),
  list_notes: z.strictObject({ action: z.literal('list_notes'), tag: z.optional(Tag()) }),
  search: z
    .strictObject({ action: z.literal('search'), query: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)), tag: z.optional(Tag()) })
    .check(z.describe('notes holding every word of the query, ranked: title hits x3, tag hits x2, content occurrences')),
}));

export const notesWorkspaceActions: SkillActionBodies = { bodies: notesWorkspaceBodies, example: { action: 'search', query: 'tech rider' } };
