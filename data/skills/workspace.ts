import * as keys from '../keys';
import type { Key } from '../keys';
import { ConditionFailedError, tenant, tx, type TransactItem } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * workspace-suite folders and documents. A folder holds `children`, the count of the folders and
 * documents directly in it, moved in the same transaction as every create, move and delete inside
 * it: a folder can only be deleted at zero, and nothing can be created in a folder being deleted.
 */
export interface WorkspaceFolder extends Record<string, unknown> {
  folderId: string;
  name: string;
  parentId?: string;
  children: number;
  createdAt: string;
}

export interface WorkspaceDocument extends Record<string, unknown> {
  documentId: string;
  title: string;
  content: string;
  folderId?: string;
  createdAt: string;
  updatedAt: string;
}

/** A referenced folder does not exist (or is not the caller's). */
export class FolderMissingError extends DomainError {
  constructor() {
    super('notFound', 'folder not found', 'NOT_FOUND');
  }
}
export class FolderNotEmptyError extends DomainError {
  constructor() {
    super('conflict', 'the folder is not empty', 'FOLDER_NOT_EMPTY');
  }
}

const countIn = (userId: string, folderId: string, by: 1 | -1): TransactItem =>
  tx.update(keys.workspaceFolder(userId, folderId), { expression: 'ADD children :by', values: { ':by': by } }, { expression: 'attribute_exists(pk)' });

const inFolder = (folderId: string | undefined) =>
  folderId ? { expression: 'folderId = :from', values: { ':from': folderId } } : { expression: 'attribute_not_exists(folderId)' };

/** Runs the transaction; a failed condition on a folder counter means that folder is missing. */
async function settle(items: TransactItem[], folderAt: number[]): Promise<void> {
  try {
    await transactRetrying(items);
  } catch (err) {
    if (err instanceof ConditionFailedError && folderAt.some((i) => err.reasons[i] === 'ConditionalCheckFailed')) throw new FolderMissingError();
    throw err;
  }
}

export async function createFolder(userId: string, folder: WorkspaceFolder): Promise<void> {
  const items = [tx.put({ ...keys.workspaceFolder(userId, folder.folderId), ...folder }, { expression: 'attribute_not_exists(pk)' })];
  if (folder.parentId) items.push(countIn(userId, folder.parentId, 1));
  await settle(items, [1]);
}

export async function createDocument(userId: string, doc: WorkspaceDocument): Promise<void> {
  const items = [tx.put({ ...keys.workspaceDocument(userId, doc.documentId), ...doc }, { expression: 'attribute_not_exists(pk)' })];
  if (doc.folderId) items.push(countIn(userId, doc.folderId, 1));
  await settle(items, [1]);
}

/** Moves a document between folders (undefined = the top level); false when the document is gone or moved meanwhile. */
export async function moveDocument(userId: string, doc: WorkspaceDocument, to: string | undefined, now: string): Promise<boolean> {
  const from = inFolder(doc.folderId);
  const update = to
    ? { expression: 'SET folderId = :to, updatedAt = :now', values: { ':to': to, ':now': now } }
    : { expression: 'REMOVE folderId SET updatedAt = :now', values: { ':now': now } };
  const items = [
    tx.update(keys.workspaceDocument(userId, doc.documentId), update, { expression: `attribute_exists(pk) AND ${from.expression}`, values: from.values }),
  ];
  if (doc.folderId) items.push(countIn(userId, doc.folderId, -1));
  if (to) items.push(countIn(userId, to, 1));
  try {
    await settle(items, to ? [items.length - 1] : []);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

/** Deletes a document (and releases its place in its folder); false when it was already gone or moved. */
export async function deleteDocument(userId: string, doc: WorkspaceDocument): Promise<boolean> {
  const from = inFolder(doc.folderId);
  const items = [tx.delete(keys.workspaceDocument(userId, doc.documentId), { expression: `attribute_exists(pk) AND ${from.expression}`, values: from.values })];
  if (doc.folderId) items.push(countIn(userId, doc.folderId, -1));
  try {
    await transactRetrying(items);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function deleteFolder(userId: string, folder: WorkspaceFolder): Promise<void> {
  const items = [tx.delete(keys.workspaceFolder(userId, folder.folderId), { expression: 'attribute_exists(pk) AND children = :zero', values: { ':zero': 0 } })];
  if (folder.parentId) items.push(countIn(userId, folder.parentId, -1));
  try {
    await transactRetrying(items);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') throw new FolderNotEmptyError();
    throw err;
  }
}

export const getFolder = (userId: string, folderId: string) => tenant(userId).get<WorkspaceFolder>(keys.workspaceFolder(userId, folderId), true);
export const getDocument = (userId: string, documentId: string) => tenant(userId).get<WorkspaceDocument>(keys.workspaceDocument(userId, documentId), true);
export const documentKey = (userId: string, documentId: string): Key => keys.workspaceDocument(userId, documentId);
export const listFolders = (userId: string) => tenant(userId).queryAll<WorkspaceFolder>(keys.workspaceFolderPrefix, { consistent: true });
export const listDocuments = (userId: string) => tenant(userId).queryAll<WorkspaceDocument>(keys.workspaceDocumentPrefix, { consistent: true });
