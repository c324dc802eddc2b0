import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';

export const DOCUMENT_CONTENT_MAX_CHARS = 200_000;

const FolderId = lazySchema(() => z.string().check(z.regex(/^fld_[0-9a-f]{24}$/, 'a folder id')));
const DocumentId = lazySchema(() => z.string().check(z.regex(/^doc_[0-9a-f]{24}$/, 'a document id')));
const Name = lazySchema(() => z.string().check(z.trim(), z.minLength(1), z.maxLength(200)));
const Content = lazySchema(() => z.string().check(z.maxLength(DOCUMENT_CONTENT_MAX_CHARS)));

export const workspaceSuiteBodies = lazySchema(() => ({
  create_folder: z.strictObject({
    action: z.literal('create_folder'),
    name: Name(),
    parentId: z.optional(FolderId()).check(z.describe('omitted = top level')),
  }),
  list_folder: z
    .strictObject({ action: z.literal('list_folder'), folderId: z.optional(FolderId()).check(z.describe('omitted = top level')) })
    .check(z.describe('the folders and documents directly inside')),
  delete_folder: z.strictObject({ action: z.literal('delete_folder'), folderId: FolderId() }).check(z.describe('only an empty folder (409 otherwise)')),
  create_document: z.strictObject({
    action: z.literal('create_document'),
    title: Name(),
    content: z._default(Content(), ''),
    folderId: z.optional(FolderId()),
  }),
  get_document: z.strictObject({ action: z.literal('get_document'), documentId: DocumentId() }),
  update_document: z.strictObject({
    action: z.literal('update_document'),
    documentId: DocumentId(),
    title: z.optional(Name()),
    content: z.optional(Content()),
  }),
  move_document: z.strictObject({
    action: z.literal('move_document'),
    documentId: DocumentId(),
    folderId: z.nullable(FolderId()).check(z.describe('null = top level')),
  }),
  delete_document: z.strictObject({ action: z.literal('delete_document'), documentId: DocumentId() }),
}));

export const workspaceSuiteActions: SkillActionBodies = { bodies: workspaceSuiteBodies, example: { action: 'create_document', title: 'Tour budget 2026' } };
