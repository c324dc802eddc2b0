import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/workspace-suite';
import { getFolder, listDocuments } from '#data/skills/workspace';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const run = (userId: string, body: Record<string, unknown>) => runSkill(skill, userId, body);

describe('workspace-suite', () => {
  it('keeps documents in folders: create, list, update, move, and delete only an empty folder', async () => {
    const userId = newTestUserId();
    const tour = (await run(userId, { action: 'create_folder', name: 'Tour 2026' })).body.folder;
    const budgets = (await run(userId, { action: 'create_folder', name: 'Budgets', parentId: tour.folderId })).body.folder;
    const doc = (await run(userId, { action: 'create_document', title: 'Flights', content: 'LHR-AMS', folderId: budgets.folderId })).body.document;
    await run(userId, { action: 'create_document', title: 'Readme' });

    const top = await run(userId, { action: 'list_folder' });
    expect(top.body.folders.map((f: any) => [f.name, f.items])).toEqual([['Tour 2026', 1]]);
    expect(top.body.documents.map((d: any) => d.title)).toEqual(['Readme']);
    const inBudgets = await run(userId, { action: 'list_folder', folderId: budgets.folderId });
    expect(inBudgets.body).toMatchObject({
      folder: { name: 'Budgets', parentId: tour.folderId, items: 1 },
      folders: [],
      documents: [{ title: 'Flights', size: 7 }],
    });

    const edited = await run(userId, { action: 'update_document', documentId: doc.documentId, content: 'LHR-AMS-BER' });
    expect(edited.body.document).toMatchObject({ title: 'Flights', content: 'LHR-AMS-BER', folderId: budgets.folderId });

    expect(await run(userId, { action: 'delete_folder', folderId: budgets.folderId })).toMatchObject({ status: 409, body: { code: 'FOLDER_NOT_EMPTY' } });
    expect((await run(userId, { action: 'delete_folder', folderId: tour.folderId })).status).toBe(409);

    const moved = await run(userId, { action: 'move_document', documentId: doc.documentId, folderId: null });
    expect(moved.body.document.folderId).toBeNull();
    expect((await getFolder(userId, budgets.folderId))?.children).toBe(0);
    expect((await run(userId, { action: 'delete_folder', folderId: budgets.folderId })).body.deleted).toBe(budgets.folderId);
    expect((await getFolder(userId, tour.folderId))?.children).toBe(0);
    expect((await run(userId, { action: 'delete_folder', folderId: tour.folderId })).status).toBe(200);

    expect((await run(userId, { action: 'delete_document', documentId: doc.documentId })).body.deleted).toBe(doc.documentId);
    expect((await run(userId, { action: 'get_document', documentId: doc.documentId })).status).toBe(404);
    expect((await run(userId, { action: 'create_document', title: 'x', folderId: budgets.folderId })).status).toBe(404);
    expect((await run(userId, { action: 'move_document', documentId: doc.documentId, folderId: null })).status).toBe(404);
  });

  it('documents created while their folder is deleted never end up orphaned', async () => {
    const userId = newTestUserId();
    const folder = (await run(userId, { action: 'create_folder', name: 'Race' })).body.folder;
    const results = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => run(userId, { action: 'create_document', title: `d${i}`, folderId: folder.folderId })),
      run(userId, { action: 'delete_folder', folderId: folder.folderId }),
    ]);
    const inFolder = (await listDocuments(userId)).filter((d) => d.folderId === folder.folderId);
    const stored = await getFolder(userId, folder.folderId);
    if (stored) expect(stored.children).toBe(inFolder.length);
    else expect(inFolder).toHaveLength(0);
    expect(results.filter((r) => r.status === 200 && r.body.document).length).toBe(inFolder.length);
  });

  it('an empty account lists an empty top level; another user reaches none of the folders or documents', async () => {
    const owner = newTestUserId();
    const folder = (await run(owner, { action: 'create_folder', name: 'Mine' })).body.folder;
    const doc = (await run(owner, { action: 'create_document', title: 'Secret', content: 'owner-only', folderId: folder.folderId })).body.document;
    const intruder = newTestUserId();
    expect((await run(intruder, { action: 'list_folder' })).body).toEqual({ success: true, folder: null, folders: [], documents: [] });
    expect((await run(intruder, { action: 'list_folder', folderId: folder.folderId })).status).toBe(404);
    expect((await run(intruder, { action: 'get_document', documentId: doc.documentId })).status).toBe(404);
    expect((await run(intruder, { action: 'update_document', documentId: doc.documentId, content: 'x' })).status).toBe(404);
    expect((await run(intruder, { action: 'move_document', documentId: doc.documentId, folderId: null })).status).toBe(404);
    expect((await run(intruder, { action: 'delete_document', documentId: doc.documentId })).status).toBe(404);
    expect((await run(intruder, { action: 'delete_folder', folderId: folder.folderId })).status).toBe(404);
    expect((await run(intruder, { action: 'create_document', title: 'planted', folderId: folder.folderId })).status).toBe(404);
    expect((await run(owner, { action: 'get_document', documentId: doc.documentId })).body.document.content).toBe('owner-only');
    expect((await getFolder(owner, folder.folderId))?.children).toBe(1);
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = newTestUserId();
    const bad = [
      { action: 'create_folder' },
      { action: 'list_folder', folderId: 'root' },
      { action: 'delete_folder' },
      { action: 'create_document', title: '' },
      { action: 'get_document', documentId: 'fld_000000000000000000000000' },
      { action: 'update_document', documentId: 'doc_000000000000000000000000', owner: 'x' },
      { action: 'move_document', documentId: 'doc_000000000000000000000000' },
      { action: 'delete_document', documentId: 7 },
    ];
    for (const body of bad) {
      const res = await run(userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
  });
});
