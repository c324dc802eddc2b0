import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { config, filesConfig } from '#platform/config';
import { s3Storage } from './file-storage-s3';

/**
 * Object storage of the file-manager skill: bytes under an object key `<userId>/<fileId>`; the
 * metadata and the quota live in DynamoDB. Agent checkpoints keep their snapshot under
 * `checkpoints/<userId>/<checkpointId>`, the automatic ones under `checkpoints-auto/`, which the
 * bucket expires by itself. `local` is a folder (FILES_DIR), `s3` a bucket
 * (FILES_BUCKET). Uploads by URL go to `pending/<userId>/<fileId>` and are moved to their place
 * when confirmed; in S3 a lifecycle rule removes pending objects nobody confirmed.
 */
export interface UploadTarget {
  url: string;
  method: 'PUT';
  /** Headers the PUT must send as given: they are part of the signature. */
  headers: Record<string, string>;
  expiresAt: string;
}

export interface FileStorage {
  put(objectKey: string, bytes: Buffer, contentType: string): Promise<void>;
  get(objectKey: string): Promise<Buffer | undefined>;
  delete(objectKey: string): Promise<void>;
  /** The stored object's size in bytes, undefined when there is none. */
  size(objectKey: string): Promise<number | undefined>;
  move(from: string, to: string): Promise<void>;
  /** Object keys under a prefix (`<userId>/`). */
  list(prefix: string): Promise<string[]>;
  /** A URL accepting one PUT of exactly `size` bytes of `contentType` at `objectKey`, until it expires. */
  uploadTarget(objectKey: string, opts: { size: number; contentType: string; now: Date }): Promise<UploadTarget>;
  /** A URL that answers one object's bytes to a plain GET until it expires: unguessable, signed, no session needed. */
  downloadUrl(objectKey: string, opts: { contentType: string; now: Date }): Promise<{ url: string; expiresAt: string }>;
}

const PART = '[A-Za-z0-9_-]{1,80}';
const OBJECT_KEY = new RegExp(`^((pending|checkpoints|checkpoints-auto)/)?${PART}/${PART}$`);
/** A confirmed file of the file-manager: the only objects a signed download URL may name. */
const FILE_KEY = new RegExp(`^${PART}/${PART}$`);

function localPath(objectKey: string): string {
  if (!OBJECT_KEY.test(objectKey)) throw new Error('invalid object key');
  const root = resolve(filesConfig().dir);
  const path = resolve(root, objectKey);
  if (!path.startsWith(root + sep)) throw new Error('object key outside the storage folder');
  return path;
}

const absent = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

// --- local presigned uploads ---------------------------------------------------------------------
/** The local server's route that takes the signed PUT (local/pages.ts). */
export const LOCAL_UPLOAD_PATH = '/local-files/upload';

/** The local server's route that answers a signed download URL's GET (local/pages.ts). */
export const LOCAL_DOWNLOAD_PATH = '/local-files/download';

function urlSignature(purpose: 'upload' | 'download', fields: (string | number)[]): string {
  const secret = config().jwt.secret;
  if (!secret) throw new Error('JWT_SECRET is not set: local file URLs cannot be signed');
  const key = createHmac('sha256', secret).update(`file-manager ${purpose} url`).digest();
  return createHmac('sha256', key).update(fields.join('\n')).digest('hex');
}

const uploadSignature = (objectKey: string, expires: number, size: number, contentType: string) =>
  urlSignature('upload', ['PUT', objectKey, expires, size, contentType]);
const downloadSignature = (objectKey: string, expires: number, contentType: string) => urlSignature('download', ['GET', objectKey, expires, contentType]);

const sameHex = (given: string, expected: string) => {
  const [a, b] = [Buffer.from(given, 'hex'), Buffer.from(expected, 'hex')];
  return a.length === b.length && timingSafeEqual(a, b);
};

export type LocalDownloadResult = { status: 200; bytes: Buffer; contentType: string } | { status: 400 | 403 | 404; error: string; code: string };

/** Answers a GET of LOCAL_DOWNLOAD_PATH as S3 answers its presigned GET: signature, expiry, then the object. */
export async function serveLocalDownload(query: URLSearchParams, now = new Date()): Promise<LocalDownloadResult> {
  const objectKey = query.get('key') ?? '';
  const expires = Number(query.get('expires'));
  const contentType = query.get('type') ?? '';
  if (!FILE_KEY.test(objectKey) || !Number.isSafeInteger(expires)) {
    return { status: 400, error: 'malformed download URL', code: 'BAD_DOWNLOAD_URL' };
  }
  if (!sameHex(query.get('signature') ?? '', downloadSignature(objectKey, expires, contentType)))
    return { status: 403, error: 'signature does not match', code: 'SIGNATURE_MISMATCH' };
  if (now.getTime() > expires * 1000) return { status: 403, error: 'download URL expired', code: 'URL_EXPIRED' };
  const bytes = await localStorage.get(objectKey);
  if (!bytes) return { status: 404, error: 'no such file', code: 'NOT_FOUND' };
  return { status: 200, bytes, contentType };
}

export type LocalUploadResult = { status: 200 } | { status: 400 | 403 | 413; error: string; code: string };

/**
 * Checks a PUT to LOCAL_UPLOAD_PATH the way S3 checks its presigned URL: the signature over the
 * key, expiry, size and type, the expiry, and a body of exactly the signed size and type. Then stores it.
 */
export async function acceptLocalUpload(query: URLSearchParams, contentType: string | undefined, body: Buffer, now = new Date()): Promise<LocalUploadResult> {
  const objectKey = query.get('key') ?? '';
  const expires = Number(query.get('expires'));
  const size = Number(query.get('size'));
  const type = query.get('type') ?? '';
  if (!objectKey.startsWith('pending/') || !OBJECT_KEY.test(objectKey) || !Number.isSafeInteger(expires) || !Number.isSafeInteger(size)) {
    return { status: 400, error: 'malformed upload URL', code: 'BAD_UPLOAD_URL' };
  }
  if (!sameHex(query.get('signature') ?? '', uploadSignature(objectKey, expires, size, type)))
    return { status: 403, error: 'signature does not match', code: 'SIGNATURE_MISMATCH' };
  if (now.getTime() > expires * 1000) return { status: 403, error: 'upload URL expired', code: 'URL_EXPIRED' };
  if (body.length !== size) return { status: body.length > size ? 413 : 400, error: `the body must be exactly ${size} bytes`, code: 'SIZE_MISMATCH' };
  if ((contentType ?? '') !== type) return { status: 403, error: 'content-type differs from the signed one', code: 'SIGNATURE_MISMATCH' };
  await localStorage.put(objectKey, body, type);
  return { status: 200 };
}

const localStorage: FileStorage = {
  async put(objectKey, bytes) {
    const path = localPath(objectKey);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, bytes, { mode: 0o600 });
  },
  async get(objectKey) {
    try {
      return await readFile(localPath(objectKey));
    } catch (err) {
      if (absent(err)) return undefined;
      throw err;
    }
  },
  async delete(objectKey) {
    await rm(localPath(objectKey), { force: true });
  },
  async size(objectKey) {
    try {
      return (await stat(localPath(objectKey))).size;
    } catch (err) {
      if (absent(err)) return undefined;
      throw err;
    }
  },
  async move(from, to) {
    const target = localPath(to);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await rename(localPath(from), target);
  },
  async list(prefix) {
    const root = resolve(filesConfig().dir);
    const folder = resolve(root, prefix);
    if (!folder.startsWith(root + sep)) throw new Error('prefix outside the storage folder');
    try {
      return (await readdir(folder)).map((name) => relative(root, join(folder, name)).split(sep).join('/'));
    } catch (err) {
      if (absent(err)) return [];
      throw err;
    }
  },
  async uploadTarget(objectKey, { size, contentType, now }) {
    localPath(objectKey);
    const expires = Math.floor(now.getTime() / 1000) + filesConfig().uploadUrlTtlSeconds;
    const url = new URL(LOCAL_UPLOAD_PATH, config().appUrl);
    for (const [k, v] of Object.entries({ key: objectKey, expires: String(expires), size: String(size), type: contentType })) url.searchParams.set(k, v);
    url.searchParams.set('signature', uploadSignature(objectKey, expires, size, contentType));
    return { url: url.href, method: 'PUT', headers: { 'content-type': contentType }, expiresAt: new Date(expires * 1000).toISOString() };
  },
  async downloadUrl(objectKey, { contentType, now }) {
    localPath(objectKey);
    const expires = Math.floor(now.getTime() / 1000) + filesConfig().downloadUrlTtlSeconds;
    const url = new URL(LOCAL_DOWNLOAD_PATH, config().appUrl);
    for (const [k, v] of Object.entries({ key: objectKey, expires: String(expires), type: contentType })) url.searchParams.set(k, v);
    url.searchParams.set('signature', downloadSignature(objectKey, expires, contentType));
    return { url: url.href, expiresAt: new Date(expires * 1000).toISOString() };
  },
};

export function fileStorage(): FileStorage {
  switch (filesConfig().storage) {
    case 'local':
      return localStorage;
    case 's3':
      return s3Storage;
  }
}

export const objectKeyOf = (userId: string, fileId: string) => `${userId}/${fileId}`;
export const pendingObjectKeyOf = (userId: string, fileId: string) => `pending/${objectKeyOf(userId, fileId)}`;

/** Where a checkpoint's snapshot is kept: automatic ones under the prefix the bucket expires. */
export const checkpointObjectKeyOf = (userId: string, checkpointId: string, kind: 'named' | 'auto') =>
  `${kind === 'auto' ? 'checkpoints-auto' : 'checkpoints'}/${objectKeyOf(userId, checkpointId)}`;
/** Every prefix an account's objects live under (account deletion removes them all). */
export const accountObjectPrefixes = (userId: string) => [
  objectKeyOf(userId, ''),
  pendingObjectKeyOf(userId, ''),
  `checkpoints/${objectKeyOf(userId, '')}`,
  `checkpoints-auto/${objectKeyOf(userId, '')}`,
];
