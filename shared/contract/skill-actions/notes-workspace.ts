import * as z from 'zod';
import type { SkillActionBodies } from './index';

export const NOTE_CONTENT_MAX_CHARS = 100_000;

const NoteId = z.string().regex(/^note_[0-9a-f]{24}$/, 'a note id');
const Title = z.string().trim().min(1).max(200);
const Content = z.string().max(NOTE_CONTENT_MAX_CHARS);
const Tag = z.string().trim().min(1).max(50).toLowerCase();
const Tags = z.array(Tag).max(20);

export const notesWorkspaceBodies = {
  create_note: z.strictObject({ action: z.literal('create_note'), title: Title, content: Content.default(''), tags: Tags.default([]) }),
  get_note: z.strictObject({ action: z.literal('get_note'), noteId: NoteId }),
  update_note: z.strictObject({
    action: z.literal('update_note'),
    noteId: NoteId,
    title: Title.optional(),
    content: Content.optional(),
    tags: Tags.optional(),
  }),
  delete_note: z.strictObject({ action: z.literal('delete_note'), noteId: NoteId }),
  list_notes: z.strictObject({ action: z.literal('list_notes'), tag: Tag.optional() }),
  search: z
    .strictObject({ action: z.literal('search'), query: z.string().trim().min(1).max(200), tag: Tag.optional() })
    .describe('notes holding every word of the query, ranked: title hits x3, tag hits x2, content occurrences'),
};

export const notesWorkspaceActions: SkillActionBodies = { bodies: notesWorkspaceBodies, example: { action: 'search', query: 'tech rider' } };
