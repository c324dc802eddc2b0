import { workspaceSuiteBodies as bodies } from '#contract/skill-actions/workspace-suite';
import { newRecordId, updateRecord } from '#data/skills/records';
import {
  createDocument,
  createFolder,
  deleteDocument,
  deleteFolder,
  documentKey,
  getDocument,
  getFolder,
  listDocuments,
  listFolders,
  moveDocument,
  type WorkspaceDocument,
  type WorkspaceFolder,
} from '#data/skills/workspace';
import { conflict, notFound } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

const folderView = (f: WorkspaceFolder) => ({ folderId: f.folderId, name: f.name, parentId: f.parentId ?? null, items: f.children, createdAt: f.createdAt });
const documentSummary = (d: WorkspaceDocument) => ({
  documentId: d.documentId,
  title: d.title,
  folderId: d.folderId ?? null,
  size: d.content.length,
  updatedAt: d.updatedAt,
});
const documentView = (d: WorkspaceDocument) => ({ ...documentSummary(d), content: d.content, createdAt: d.createdAt });

const folderMissing = () => notFound('folder not found');
const documentMissing = () => notFound('document not found');

export const skill: SkillModule = {
  name: 'workspace-suite',
  actions: {
    create_folder: action(bodies().create_folder, async (call, body) => {
      const folder: WorkspaceFolder = {
        folderId: newRecordId('fld'),
        name: body.name,
        parentId: body.parentId,
        children: 0,
        createdAt: call.now.toISOString(),
      };
      await createFolder(call.userId, folder);
      return { folder: folderView(folder) };
    }),
    list_folder: action(bodies().list_folder, async (call, body) => {
      const folder = body.folderId ? await getFolder(call.userId, body.folderId) : undefined;
      if (body.folderId && !folder) throw folderMissing();
      const [folders, documents] = await Promise.all([listFolders(call.userId), listDocuments(call.userId)]);
      const here =
        <T extends { parentId?: string; folderId?: string }>(parentOf: (x: T) => string | undefined) =>
        (x: T) =>
          parentOf(x) === body.folderId;
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      return {
        folder: folder ? folderView(folder) : null,
        folders: folders
          .filter(here((f: WorkspaceFolder) => f.parentId))
          .sort(byName)
          .map(folderView),
        documents: documents
          .filter(here((d: WorkspaceDocument) => d.folderId))
          .sort((a, b) => a.title.localeCompare(b.title))
          .map(documentSummary),
      };
    }),
    delete_folder: action(bodies().delete_folder, async (call, body) => {
      const folder = await getFolder(call.userId, body.folderId);
      if (!folder) throw folderMissing();
      await deleteFolder(call.userId, folder);
      return { deleted: body.folderId };
    }),
    create_document: action(bodies().create_document, async (call, body) => {
      const at = call.now.toISOString();
      const doc: WorkspaceDocument = {
        documentId: newRecordId('doc'),
        title: body.title,
        content: body.content,
        folderId: body.folderId,
        createdAt: at,
        updatedAt: at,
      };
      await createDocument(call.userId, doc);
      return { document: documentView(doc) };
    }),
    get_document: action(bodies().get_document, async (call, body) => {
      const doc = await getDocument(call.userId, body.documentId);
      if (!doc) throw documentMissing();
      return { document: documentView(doc) };
    }),
    update_document: action(bodies().update_document, async (call, body) => {
      const doc = await updateRecord<WorkspaceDocument>(call.userId, documentKey(call.userId, body.documentId), {
        title: body.title,
        content: body.content,
        updatedAt: call.now.toISOString(),
      });
      if (!doc) throw documentMissing();
      return { document: documentView(doc) };
    }),
    move_document: action(bodies().move_document, async (call, body) => {
      const doc = await getDocument(call.userId, body.documentId);
      if (!doc) throw documentMissing();
      const to = body.folderId ?? undefined;
      if (!(await moveDocument(call.userId, doc, to, call.now.toISOString()))) throw conflict('the document changed meanwhile, try again');
      return { document: documentSummary({ ...doc, folderId: to, updatedAt: call.now.toISOString() }) };
    }),
    delete_document: action(bodies().delete_document, async (call, body) => {
      const doc = await getDocument(call.userId, body.documentId);
      if (!doc || !(await deleteDocument(call.userId, doc))) throw documentMissing();
      return { deleted: body.documentId };
    }),
  },
};
