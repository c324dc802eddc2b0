import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/file-manager';
import { filesConfig } from '#platform/config';
import { FILE_UPLOAD_MAX_BYTES } from '#contract/skill-actions/file-manager';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { newTestUserId, runSkill } from '../helpers/skill-call';

const SOLO_BYTES = 2 * 1024 ** 3;

async function subscriber(plan = 'solo', extraStorageGb?: number) {
  const userId = newTestUserId();
  await tenant(userId).put({
    ...keys.subscription(userId),
    status: 'active',
    plan,
    extraStorageGb,
    eventCreated: Date.now(),
    updatedAt: new Date().toISOString(),
  });
  return userId;
}

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const objectsOf = async (userId: string) => readdir(join(filesConfig().dir, userId)).catch(() => [] as string[]);

describe('file-manager', () => {
  it('uploads, lists, reads back and deletes files, keeping the bytes in use', async () => {
    const userId = await subscriber();
    const rider = await runSkill(skill, userId, {
      action: 'upload',
      name: 'rider.txt',
      contentBase64: b64('2x CDJ-3000\n'),
      contentType: 'text/plain',
      folder: 'press-kit',
    });
    expect(rider.status).toBe(200);
    expect(rider.body.file).toMatchObject({ name: 'rider.txt', folder: 'press-kit', size: 12, contentType: 'text/plain' });
    const logo = await runSkill(skill, userId, { action: 'upload', name: 'logo.bin', contentBase64: b64(Buffer.alloc(1000, 7)) });
    expect(logo.body.file).toMatchObject({ folder: '/', size: 1000, contentType: 'application/octet-stream' });

    expect((await runSkill(skill, userId, { action: 'list', folder: 'press-kit' })).body).toMatchObject({ count: 1, totalBytes: 12 });
    expect((await runSkill(skill, userId, { action: 'list' })).body).toMatchObject({ count: 2, totalBytes: 1012 });
    const got = await runSkill(skill, userId, { action: 'get', fileId: rider.body.file.fileId });
    expect(Buffer.from(got.body.contentBase64, 'base64').toString()).toBe('2x CDJ-3000\n');
    expect((await runSkill(skill, userId, { action: 'usage' })).body).toMatchObject({
      usedBytes: 1012,
      limitBytes: SOLO_BYTES,
      files: 2,
      maxUploadBytes: FILE_UPLOAD_MAX_BYTES,
    });

    expect((await runSkill(skill, userId, { action: 'delete', fileId: logo.body.file.fileId })).body).toMatchObject({ freedBytes: 1000 });
    expect((await runSkill(skill, userId, { action: 'delete', fileId: logo.body.file.fileId })).status).toBe(404);
    expect((await runSkill(skill, userId, { action: 'usage' })).body.usedBytes).toBe(12);
    expect(await objectsOf(userId)).toEqual([rider.body.file.fileId]);
  });

  it('concurrent uploads never pass the quota, and refused uploads leave no bytes behind', async () => {
    const userId = await subscriber('solo', 1);
    const limit = SOLO_BYTES + 1024 ** 3;
    await tenant(userId).put({ ...keys.fileStorageUsage(userId), usedBytes: limit - 1000 });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => runSkill(skill, userId, { action: 'upload', name: `f${i}`, contentBase64: b64(Buffer.alloc(400, i)) })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(3);
    expect(refused[0]!.body).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED', limit, size: 400 });
    expect((await runSkill(skill, userId, { action: 'usage' })).body).toMatchObject({ usedBytes: limit - 200, limitBytes: limit, files: 2 });
    expect((await objectsOf(userId)).length).toBe(2);
  });

  it('an account without a plan has no storage; an empty account lists nothing', async () => {
    const userId = newTestUserId();
    expect((await runSkill(skill, userId, { action: 'list' })).body).toEqual({ success: true, files: [], count: 0, totalBytes: 0 });
    expect((await runSkill(skill, userId, { action: 'usage' })).body).toMatchObject({ usedBytes: 0, limitBytes: 0, files: 0 });
    expect(await runSkill(skill, userId, { action: 'upload', name: 'a', contentBase64: b64('x') })).toMatchObject({ status: 429, body: { limit: 0 } });
    expect(await objectsOf(userId)).toEqual([]);
  });

  it('another user reaches none of the files', async () => {
    const owner = await subscriber();
    const file = (await runSkill(skill, owner, { action: 'upload', name: 'secret.txt', contentBase64: b64('owner-only') })).body.file;
    const intruder = await subscriber();
    expect((await runSkill(skill, intruder, { action: 'get', fileId: file.fileId })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'delete', fileId: file.fileId })).status).toBe(404);
    expect((await runSkill(skill, intruder, { action: 'list' })).body.count).toBe(0);
    expect((await runSkill(skill, owner, { action: 'get', fileId: file.fileId })).status).toBe(200);
  });

  it('refuses an invalid body for each action with 400 and the issues', async () => {
    const userId = await subscriber();
    const bad = [
      { action: 'upload', name: 'x', contentBase64: 'not base64!' },
      { action: 'upload', name: '../etc/passwd', contentBase64: b64('x') },
      { action: 'upload', name: 'x', contentBase64: b64('x'), folder: 'a/../../b' },
      { action: 'upload', name: 'big', contentBase64: b64(Buffer.alloc(FILE_UPLOAD_MAX_BYTES + 3000)) },
      { action: 'list', folder: '..' },
      { action: 'get', fileId: '../../x' },
      { action: 'delete' },
      { action: 'usage', plan: 'network' },
    ];
    for (const body of bad) {
      const res = await runSkill(skill, userId, body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.issues.length).toBeGreaterThan(0);
    }
    // Just over the decoded limit while within the base64 length bound: 400 FILE_TOO_LARGE.
    expect(await runSkill(skill, userId, { action: 'upload', name: 'big', contentBase64: b64(Buffer.alloc(FILE_UPLOAD_MAX_BYTES + 1)) })).toMatchObject({
      status: 400,
      body: { code: 'FILE_TOO_LARGE' },
    });
    expect(await objectsOf(userId)).toEqual([]);
  });
});
