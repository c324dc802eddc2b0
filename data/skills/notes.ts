import * as keys from '../keys';
import { createRecord, deleteRecord, getRecord, listRecords, updateRecord } from './records';

/** The notes-workspace skill's notes, at `USER#<id> / NOTE#<noteId>`. */
export interface Note extends Record<string, unknown> {
  noteId: string;
  title: string;
  content: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

/** Stores a new note; its id must be new. */
export const createNote = (userId: string, note: Note) => createRecord(userId, keys.note(userId, note.noteId), note);

export const getNote = (userId: string, noteId: string) => getRecord<Note>(userId, keys.note(userId, noteId));

/** Sets the given fields of an existing note (undefined left alone, null removed); undefined when it is gone. */
export const updateNote = (userId: string, noteId: string, fields: Record<string, unknown>) => updateRecord<Note>(userId, keys.note(userId, noteId), fields);

/** The deleted note, or undefined when there was none. */
export const deleteNote = (userId: string, noteId: string) => deleteRecord<Note>(userId, keys.note(userId, noteId));

export const listNotes = (userId: string) => listRecords<Note>(userId, keys.notePrefix);
