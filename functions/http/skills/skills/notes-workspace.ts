import { notesWorkspaceBodies as bodies } from '#contract/skill-actions/notes-workspace';
import { createNote, deleteNote, getNote, listNotes, type Note, updateNote } from '#data/skills/notes';
import { newRecordId } from '#data/skills/records';
import { notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Notes with titles, content and tags. `search` matches notes holding every word of the query
 * (case-insensitive) in the title, the tags or the content, ranked by title hits x3, tag hits x2,
 * then content occurrences, newest first on ties.
 */

const view = (n: Note) => ({ noteId: n.noteId, title: n.title, content: n.content, tags: n.tags, createdAt: n.createdAt, updatedAt: n.updatedAt });
const summary = (n: Note) => ({ noteId: n.noteId, title: n.title, tags: n.tags, updatedAt: n.updatedAt });
const newestFirst = (a: Note, b: Note) => b.updatedAt.localeCompare(a.updatedAt);
const missing = () => notFound('note not found');

const occurrences = (haystack: string, needle: string) => {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
};

export function scoreNote(note: Pick<Note, 'title' | 'content' | 'tags'>, words: string[]): number {
  const title = note.title.toLowerCase();
  const content = note.content.toLowerCase();
  let score = 0;
  for (const word of words) {
    const inTitle = occurrences(title, word);
    const inTags = note.tags.filter((t) => t.includes(word)).length;
    const inContent = occurrences(content, word);
    if (!inTitle && !inTags && !inContent) return 0;
    score += inTitle * 3 + inTags * 2 + inContent;
  }
  return score;
}

function snippet(content: string, word: string): string {
  const at = content.toLowerCase().indexOf(word);
  if (at === -1) return content.slice(0, 120);
  const start = Math.max(0, at - 40);
  return `${start > 0 ? '…' : ''}${content.slice(start, at + word.length + 80)}${at + word.length + 80 < content.length ? '…' : ''}`;
}

export const skill: SkillModule = {
  name: 'notes-workspace',
  actions: {
    create_note: action(bodies().create_note, async (call, body) => {
      const at = call.now.toISOString();
      const note: Note = { noteId: newRecordId('note'), title: body.title, content: body.content, tags: [...new Set(body.tags)], createdAt: at, updatedAt: at };
      await createNote(call.userId, note);
      return { note: view(note) };
    }),
    get_note: action(bodies().get_note, async (call, body) => {
      const note = await getNote(call.userId, body.noteId);
      if (!note) throw missing();
      return { note: view(note) };
    }),
    update_note: action(bodies().update_note, async (call, { noteId, title, content, tags }) => {
      const note = await updateNote(call.userId, noteId, {
        title,
        content,
        tags: tags && [...new Set(tags)],
        updatedAt: call.now.toISOString(),
      });
      if (!note) throw missing();
      return { note: view(note) };
    }),
    delete_note: action(bodies().delete_note, async (call, body) => {
      if (!(await deleteNote(call.userId, body.noteId))) throw missing();
      return { deleted: body.noteId };
    }),
    list_notes: action(bodies().list_notes, async (call, body) => {
      const list = (await listNotes(call.userId)).filter((n) => !body.tag || n.tags.includes(body.tag)).sort(newestFirst);
      return { notes: list.map(summary), count: list.length };
    }),
    search: action(bodies().search, async (call, body) => {
      const words = [...new Set(body.query.toLowerCase().split(/\s+/).filter(Boolean))];
      const ranked = (await listNotes(call.userId))
        .filter((n) => !body.tag || n.tags.includes(body.tag))
        .map((n) => ({ note: n, score: scoreNote(n, words) }))
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score || newestFirst(a.note, b.note));
      return {
        query: body.query,
        results: ranked.map((r) => ({ ...summary(r.note), score: r.score, snippet: snippet(r.note.content, words[0]!) })),
        count: ranked.length,
      };
    }),
  },
};
