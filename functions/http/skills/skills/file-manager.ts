import { createHash } from 'node:crypto';
import { fileStorage, objectKeyOf, pendingObjectKeyOf } from '#adapters/file-storage';
import { fileManagerBodies as bodies, FILE_UPLOAD_MAX_BYTES, FILE_URL_UPLOAD_MAX_BYTES } from '#contract/skill-actions/file-manager';
import {
  addFile,
  getFile,
  getPendingUpload,
  listFiles,
  putPendingUpload,
  removeFile,
  StorageQuotaError,
  UploadAlreadyConfirmedError,
  usedBytes,
  type StoredFile,
} from '#data/skills/files';
import { newRecordId } from '#data/skills/records';
import { conflict, invalid, notFound } from '#platform/errors';
import { planAccess } from '#domain/skills/plan-access';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Files in object storage (adapters/file-storage.ts), metadata and quota in DynamoDB.
 * The quota is the plan's agent storage (spec 2.16: label 8 GB, solo 2 GB, collective 4 GB,
 * network 16 GB; admins network) plus the extra storage bought with /api/card/storage-upgrade;
 * no recognised plan, no storage. Bytes are written first and the record second, so a failed
 * record (quota, race) removes the bytes and no record ever points at nothing.
 *
 * Two ways in: `upload` carries the bytes base64 in the call (FILE_UPLOAD_MAX_BYTES); `upload_url`
 * answers a presigned PUT URL (S3's, or the local server's signed route) for up to
 * FILE_URL_UPLOAD_MAX_BYTES, and `confirm_upload` then checks the stored size, moves the object
 * from `pending/` to its place and counts it against the quota, as `upload` does.
 */
const GB = 1024 ** 3;

export async function quotaBytes(userId: string): Promise<number> {
  const { access, subscription } = await planAccess(userId);
  const planGb = access.limits ? Number.parseFloat(access.limits.memory) : 0;
  return Math.round((planGb + (access.limits ? (subscription?.extraStorageGb ?? 0) : 0)) * GB);
}

/** A pending upload record outlives its URL by a day, so a late confirmation still finds it. */
const PENDING_RECORD_GRACE_SECONDS = 86_400;

/**
 * Writes a file's bytes, then its record within the quota `limit` (429 STORAGE_QUOTA_EXCEEDED when
 * it does not fit, the bytes removed again). Shared with skills that produce files (visual-synthesizer).
 */
export async function storeFile(
  userId: string,
  meta: Pick<StoredFile, 'name' | 'folder' | 'contentType'>,
  bytes: Buffer,
  now: Date,
  limit: number,
): Promise<StoredFile> {
  const fileId = newRecordId('file');
  const file: StoredFile = {
    fileId,
    ...meta,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    objectKey: objectKeyOf(userId, fileId),
    uploadedAt: now.toISOString(),
  };
  await fileStorage().put(file.objectKey, bytes, file.contentType);
  try {
    await addFile(userId, file, limit);
  } catch (err) {
    await fileStorage().delete(file.objectKey);
    throw err;
  }
  return file;
}

const view = (f: StoredFile) => ({
  fileId: f.fileId,
  name: f.name,
  folder: f.folder,
  contentType: f.contentType,
  size: f.size,
  sha256: f.sha256,
  uploadedAt: f.uploadedAt,
});

export const skill: SkillModule = {
  name: 'file-manager',
  actions: {
    upload: action(bodies().upload, async (call, body) => {
      const bytes = Buffer.from(body.contentBase64, 'base64');
      if (bytes.length > FILE_UPLOAD_MAX_BYTES)
        throw invalid(`a file may hold at most ${FILE_UPLOAD_MAX_BYTES} bytes`, 'FILE_TOO_LARGE', { limit: FILE_UPLOAD_MAX_BYTES });
      const file = await storeFile(
        call.userId,
        { name: body.name, folder: body.folder, contentType: body.contentType },
        bytes,
        call.now,
        await quotaBytes(call.userId),
      );
      return { file: view(file) };
    }),
    upload_url: action(bodies().upload_url, async (call, body) => {
      const [used, limit] = await Promise.all([usedBytes(call.userId), quotaBytes(call.userId)]);
      if (used + body.size > limit) throw new StorageQuotaError(used, limit, body.size);
      const fileId = newRecordId('file');
      const objectKey = pendingObjectKeyOf(call.userId, fileId);
      const upload = await fileStorage().uploadTarget(objectKey, { size: body.size, contentType: body.contentType, now: call.now });
      await putPendingUpload(call.userId, {
        fileId,
        name: body.name,
        folder: body.folder,
        contentType: body.contentType,
        size: body.size,
        objectKey,
        createdAt: call.now.toISOString(),
        expiresAt: Math.floor(Date.parse(upload.expiresAt) / 1000) + PENDING_RECORD_GRACE_SECONDS,
      });
      return { fileId, key: objectKey, upload, maxUploadBytes: FILE_URL_UPLOAD_MAX_BYTES };
    }),
    confirm_upload: action(bodies().confirm_upload, async (call, body) => {
      const pending = await getPendingUpload(call.userId, body.fileId);
      if (!pending) {
        const done = await getFile(call.userId, body.fileId);
        if (done) return { file: view(done) };
        throw notFound('no upload with that id');
      }
      const storage = fileStorage();
      const size = await storage.size(pending.objectKey);
      if (size === undefined) throw conflict('nothing has been uploaded to the URL yet', 'UPLOAD_NOT_RECEIVED');
      if (size !== pending.size) {
        await storage.delete(pending.objectKey);
        throw invalid(`the upload holds ${size} bytes, not the ${pending.size} announced`, 'SIZE_MISMATCH');
      }
      const bytes = await storage.get(pending.objectKey);
      if (!bytes) throw conflict('nothing has been uploaded to the URL yet', 'UPLOAD_NOT_RECEIVED');
      const file: StoredFile = {
        fileId: pending.fileId,
        name: pending.name,
        folder: pending.folder,
        contentType: pending.contentType,
        size,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        objectKey: objectKeyOf(call.userId, pending.fileId),
        uploadedAt: call.now.toISOString(),
      };
      const limit = await quotaBytes(call.userId);
      try {
        await storage.move(pending.objectKey, file.objectKey);
      } catch (err) {
        // A concurrent confirmation moved it first.
        const done = await getFile(call.userId, body.fileId);
        if (done) return { file: view(done) };
        throw err;
      }
      try {
        await addFile(call.userId, file, limit, pending.fileId);
      } catch (err) {
        if (err instanceof UploadAlreadyConfirmedError) {
          const done = await getFile(call.userId, body.fileId);
          if (done) return { file: view(done) };
        }
        await storage.delete(file.objectKey);
        throw err;
      }
      return { file: view(file) };
    }),
    list: action(bodies().list, async (call, body) => {
      const files = (await listFiles(call.userId)).filter((f) => body.folder === undefined || f.folder === body.folder);
      files.sort((a, b) => a.folder.localeCompare(b.folder) || a.name.localeCompare(b.name));
      return { files: files.map(view), count: files.length, totalBytes: files.reduce((n, f) => n + f.size, 0) };
    }),
    get: action(bodies().get, async (call, body) => {
      const file = await getFile(call.userId, body.fileId);
      const bytes = file && (await fileStorage().get(file.objectKey));
      if (!file || !bytes) throw notFound('file not found');
      return { file: view(file), contentBase64: bytes.toString('base64') };
    }),
    delete: action(bodies().delete, async (call, body) => {
      const file = await getFile(call.userId, body.fileId);
      if (!file || !(await removeFile(call.userId, file))) throw notFound('file not found');
      await fileStorage().delete(file.objectKey);
      return { deleted: body.fileId, freedBytes: file.size };
    }),
    usage: action(bodies().usage, async (call) => {
      const [used, limit, files] = await Promise.all([usedBytes(call.userId), quotaBytes(call.userId), listFiles(call.userId)]);
      return { usedBytes: used, limitBytes: limit, files: files.length, maxUploadBytes: FILE_UPLOAD_MAX_BYTES };
    }),
  },
};
