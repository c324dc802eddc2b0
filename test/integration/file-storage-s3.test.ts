import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skill } from '#functions/http/skills/skills/file-manager';
import { fileStorage } from '#adapters/file-storage';
import { resetS3Client } from '#adapters/file-storage-s3';
import { reloadConfig } from '#platform/config';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { startFakeS3, type FakeS3 } from '../helpers/fake-s3';
import { startLocalPagesServer } from '../helpers/local-pages-server';
import { newTestUserId, runSkill } from '../helpers/skill-call';

async function subscriber() {
  const userId = newTestUserId();
  await tenant(userId).put({ ...keys.subscription(userId), status: 'active', plan: 'solo', eventCreated: Date.now(), updatedAt: new Date().toISOString() });
  return userId;
}

const put = (upload: { url: string; headers: Record<string, string> }, body: Buffer, headers: Record<string, string> = {}) =>
  fetch(upload.url, { method: 'PUT', headers: { ...upload.headers, ...headers }, body });

/** upload_url, the PUT to the URL, confirm_upload; answers the confirmation. */
async function uploadByUrl(userId: string, bytes: Buffer, name = 'mix.wav') {
  const issued = await runSkill(skill, userId, { action: 'upload_url', name, size: bytes.length, contentType: 'audio/wav', folder: 'mixes' });
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  const sent = await put(issued.body.upload, bytes);
  expect(sent.status, await sent.text()).toBe(200);
  return { issued, confirmed: await runSkill(skill, userId, { action: 'confirm_upload', fileId: issued.body.fileId }) };
}

describe('file-manager on S3 (a loopback S3 speaking the REST wire format)', () => {
  let s3: FakeS3;
  beforeAll(async () => {
    s3 = await startFakeS3();
    reloadConfig({ FILE_STORAGE: 's3', FILES_BUCKET: s3.bucket, FILES_S3_ENDPOINT: s3.endpoint });
    resetS3Client();
  });
  afterAll(async () => {
    reloadConfig({ FILE_STORAGE: undefined, FILES_BUCKET: undefined, FILES_S3_ENDPOINT: undefined });
    resetS3Client();
    await s3.close();
  });

  it('the adapter puts, reads, sizes, lists, moves and deletes objects', async () => {
    const storage = fileStorage();
    await storage.put('u_adapter/file_a', Buffer.from('hello'), 'text/plain');
    await storage.put('u_adapter/file_b', Buffer.from('world!'), 'text/plain');
    expect((await storage.get('u_adapter/file_a'))?.toString()).toBe('hello');
    expect(await storage.size('u_adapter/file_b')).toBe(6);
    expect(await storage.list('u_adapter/')).toEqual(['u_adapter/file_a', 'u_adapter/file_b']);
    await storage.move('u_adapter/file_b', 'u_adapter/file_c');
    expect(await storage.get('u_adapter/file_b')).toBeUndefined();
    expect(await storage.size('u_adapter/file_missing')).toBeUndefined();
    expect(s3.objects.get('u_adapter/file_c')?.body.toString()).toBe('world!');
    await storage.delete('u_adapter/file_a');
    expect(await storage.list('u_adapter/')).toEqual(['u_adapter/file_c']);
    expect(new Set(s3.requests.map((r) => r.method))).toEqual(new Set(['PUT', 'GET', 'HEAD', 'DELETE']));
    expect(s3.requests.some((r) => r.query.includes('list-type=2'))).toBe(true);
  });

  it('uploads base64 into the bucket, and by presigned URL then confirmation within the quota', async () => {
    const userId = await subscriber();
    const small = await runSkill(skill, userId, { action: 'upload', name: 'rider.txt', contentBase64: Buffer.from('2x CDJ').toString('base64') });
    expect(small.status).toBe(200);
    expect(s3.objects.get(`${userId}/${small.body.file.fileId}`)?.body.toString()).toBe('2x CDJ');

    const bytes = Buffer.alloc(700 * 1024, 3); // above the base64 limit of 512 KiB
    const { issued, confirmed } = await uploadByUrl(userId, bytes);
    expect(issued.body.key).toBe(`pending/${userId}/${issued.body.fileId}`);
    expect(new URL(issued.body.upload.url).searchParams.get('X-Amz-SignedHeaders')).toContain('content-length');
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.file).toMatchObject({ fileId: issued.body.fileId, name: 'mix.wav', folder: 'mixes', size: bytes.length, contentType: 'audio/wav' });
    expect(s3.objects.has(issued.body.key)).toBe(false);
    expect(s3.objects.get(`${userId}/${issued.body.fileId}`)?.body.equals(bytes)).toBe(true);
    expect((await runSkill(skill, userId, { action: 'usage' })).body.usedBytes).toBe(bytes.length + 6);
    // Confirming again changes nothing.
    expect((await runSkill(skill, userId, { action: 'confirm_upload', fileId: issued.body.fileId })).body.file.size).toBe(bytes.length);
    expect((await runSkill(skill, userId, { action: 'usage' })).body.usedBytes).toBe(bytes.length + 6);
    const got = await runSkill(skill, userId, { action: 'get', fileId: issued.body.fileId });
    expect(Buffer.from(got.body.contentBase64, 'base64').equals(bytes)).toBe(true);
  });

  it('S3 refuses a PUT of another size or type, or after expiry; an unconfirmed or unsent upload is not a file', async () => {
    const userId = await subscriber();
    const issued = await runSkill(skill, userId, { action: 'upload_url', name: 'a.bin', size: 10, contentType: 'application/octet-stream' });
    expect((await put(issued.body.upload, Buffer.alloc(11), { 'content-length': '11' })).status).toBe(403);
    expect((await put(issued.body.upload, Buffer.alloc(10), { 'content-type': 'text/html' })).status).toBe(403);
    expect((await runSkill(skill, userId, { action: 'confirm_upload', fileId: issued.body.fileId })).status).toBe(409);
    expect((await runSkill(skill, userId, { action: 'list' })).body.count).toBe(0);

    const old = await runSkill(
      skill,
      userId,
      { action: 'upload_url', name: 'b.bin', size: 4, contentType: 'application/octet-stream' },
      { now: new Date(Date.now() - 3_600_000) },
    );
    expect((await put(old.body.upload, Buffer.alloc(4))).status).toBe(403);
    expect((await runSkill(skill, userId, { action: 'confirm_upload', fileId: 'file_000000000000000000000000' })).status).toBe(404);
  });

  it('a presigned GET answers the object to a plain fetch; another key, a changed URL or an expired one is refused', async () => {
    const storage = fileStorage();
    await storage.put('u_owner/file_img', Buffer.from('png-bytes'), 'image/png');
    await storage.put('u_other/file_img', Buffer.from('not yours'), 'image/png');
    const { url, expiresAt } = await storage.downloadUrl('u_owner/file_img', { contentType: 'image/png', now: new Date() });
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const got = await fetch(url);
    expect([got.status, got.headers.get('content-type'), Buffer.from(await got.arrayBuffer()).toString()]).toEqual([200, 'image/png', 'png-bytes']);
    expect((await fetch(url.replace('u_owner', 'u_other'))).status).toBe(403);
    expect((await fetch(url.replace(/X-Amz-Signature=[0-9a-f]/, 'X-Amz-Signature=x'))).status).toBe(403);
    expect((await fetch(url.split('?')[0]!)).status).toBe(403);
    const old = await storage.downloadUrl('u_owner/file_img', { contentType: 'image/png', now: new Date(Date.now() - 2 * 3600_000) });
    expect((await fetch(old.url)).status).toBe(403);
  });

  it('refuses a URL for more than the quota leaves, and bodies that break the action schema', async () => {
    const userId = newTestUserId(); // no plan: no storage
    const res = await runSkill(skill, userId, { action: 'upload_url', name: 'a.bin', size: 10 });
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED', current: 0, limit: 0 });
    const subscribed = await subscriber();
    for (const body of [
      { action: 'upload_url', name: 'a.bin' },
      { action: 'upload_url', name: 'a.bin', size: 0 },
      { action: 'upload_url', name: 'a.bin', size: 100 * 1024 * 1024 + 1 },
      { action: 'upload_url', name: 'a/b', size: 5 },
      { action: 'confirm_upload', fileId: 'nope' },
      { action: 'confirm_upload' },
    ]) {
      expect((await runSkill(skill, subscribed, body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('file-manager uploads by URL on the local stack (the local server checks the signed PUT)', () => {
  let base: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ base, close } = await startLocalPagesServer());
    reloadConfig({ APP_URL: base });
  });
  afterAll(async () => {
    reloadConfig({ APP_URL: undefined });
    await close();
  });

  it('stores a signed PUT in the files folder and the confirmation counts it', async () => {
    const userId = await subscriber();
    const bytes = Buffer.alloc(2000, 9);
    const { issued, confirmed } = await uploadByUrl(userId, bytes);
    expect(issued.body.upload.url.startsWith(`${base}/local-files/upload?`)).toBe(true);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await fileStorage().get(`${userId}/${issued.body.fileId}`))?.equals(bytes)).toBe(true);
    expect((await runSkill(skill, userId, { action: 'usage' })).body.usedBytes).toBe(2000);
  });

  it('refuses a tampered signature, another size or type, and an expired URL', async () => {
    const userId = await subscriber();
    const issued = await runSkill(skill, userId, { action: 'upload_url', name: 'a.bin', size: 10, contentType: 'application/octet-stream' });
    const upload = issued.body.upload;
    const tampered = new URL(upload.url);
    tampered.searchParams.set('size', '20');
    expect((await put({ ...upload, url: tampered.href }, Buffer.alloc(20))).status).toBe(403);
    expect((await put(upload, Buffer.alloc(11))).status).toBe(413);
    expect((await put(upload, Buffer.alloc(10), { 'content-type': 'text/html' })).status).toBe(403);
    const old = await runSkill(
      skill,
      userId,
      { action: 'upload_url', name: 'b.bin', size: 4, contentType: 'application/octet-stream' },
      { now: new Date(Date.now() - 3_600_000) },
    );
    const expired = await put(old.body.upload, Buffer.alloc(4));
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ code: 'URL_EXPIRED' });
    expect((await fileStorage().list(`pending/${userId}/`)).length).toBe(0);
  });
});
