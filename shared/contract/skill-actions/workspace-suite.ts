import * as z from 'zod';
import type { SkillActionBodies } from './index';

export const DOCUMENT_CONTENT_MAX_CHARS = 200_000;

const FolderId = z.string().regex(/^fld_[0-9a-f]{24}$/, 'a folder id');
const DocumentId = z.string().regex(/^doc_[0-9a-f]{24}$/, 'a document id');
const Name = z.string().trim().min(1).max(200);
const Content = z.string().max(DOCUMENT_CONTENT_MAX_CHARS);

export const workspaceSuiteBodies = {
  create_folder: z.strictObject({ action: z.literal('create_folder'), name: Name, parentId: FolderId.optional().describe('omitted = top level') }),
  list_folder: z
    .strictObject({ action: z.literal('list_folder'), folderId: FolderId.optional().describe('omitted = top level') })
    .describe('the folders and documents directly inside'),
  delete_folder: z.strictObject({ action: z.literal('delete_folder'), folderId: FolderId }).describe('only an empty folder (409 otherwise)'),
  create_document: z.strictObject({ action: z.literal('create_document'), title: Name, content: Content.default(''), folderId: FolderId.optional() }),
  get_document: z.strictObject({ action: z.literal('get_document'), documentId: DocumentId }),
  update_document: z.strictObject({ action: z.literal('update_document'), documentId: DocumentId, title: Name.optional(), content: Content.optional() }),
  move_document: z.strictObject({ action: z.literal('move_document'), documentId: DocumentId, folderId: FolderId.nullable().describe('null = top level') }),
  delete_document: z.strictObject({ action: z.literal('delete_document'), documentId: DocumentId }),
};

export const workspaceSuiteActions: SkillActionBodies = { bodies: workspaceSuiteBodies, example: { action: 'create_document', title: 'Tour budget 2026' } };
