import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { config } from '../config';

/**
 * Object storage of the file-manager skill: bytes under an object key `<userId>/<fileId>`; the
 * metadata and the quota live in DynamoDB. `local` (the only provider wired today) is a folder,
 * FILES_DIR. The S3 provider, with presigned upload URLs, needs @aws-sdk/client-s3 and
 * @aws-sdk/s3-request-presigner, which are not dependencies yet: until they are, uploads are base64.
 */
export interface FileStorage {
  put(objectKey: string, bytes: Buffer, contentType: string): Promise<void>;
  get(objectKey: string): Promise<Buffer | undefined>;
  delete(objectKey: string): Promise<void>;
}

const OBJECT_KEY = /^[A-Za-z0-9_-]{1,80}\/[A-Za-z0-9_-]{1,80}$/;

function localPath(objectKey: string): string {
  if (!OBJECT_KEY.test(objectKey)) throw new Error('invalid object key');
  const root = resolve(config().files.dir);
  const path = resolve(root, objectKey);
  if (!path.startsWith(root + sep)) throw new Error('object key outside the storage folder');
  return path;
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
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  },
  async delete(objectKey) {
    await rm(localPath(objectKey), { force: true });
  },
};

export function fileStorage(): FileStorage {
  switch (config().files.storage) {
    case 'local':
      return localStorage;
  }
}

export const objectKeyOf = (userId: string, fileId: string) => join(userId, fileId).split(sep).join('/');
