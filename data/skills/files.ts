import * as keys from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';
import { DomainError } from '#platform/errors';

/**
 * file-manager metadata at `USER#<id> / FILE#<fileId>` and the account's bytes in use at
 * `FILESTORAGE`, moved in the same transaction as each file record. The quota condition
 * `usedBytes <= limit - size` is checked by the database, so concurrent uploads cannot pass it.
 */
export interface StoredFile extends Record<string, unknown> {
  fileId: string;
  name: string;
  folder: string;
  contentType: string;
  size: number;
  sha256: string;
  objectKey: string;
  uploadedAt: string;
}

/** A file that does not fit the account's storage: what is in use, the quota and the file's size. */
export class StorageQuotaError extends DomainError {
  constructor(current: number, limit: number, size: number) {
    super('limitReached', 'storage quota reached', 'STORAGE_QUOTA_EXCEEDED', { current, limit, size });
  }
}

/** An upload by URL between the URL's issue and its confirmation; the record expires a day after the URL. */
export interface PendingUpload extends Record<string, unknown> {
  fileId: string;
  name: string;
  folder: string;
  contentType: string;
  size: number;
  objectKey: string;
  createdAt: string;
  expiresAt: number;
}

export const putPendingUpload = (userId: string, upload: PendingUpload) =>
  tenant(userId).put({ ...keys.pendingUpload(userId, upload.fileId), ...upload }, { expression: 'attribute_not_exists(pk)' });
export const getPendingUpload = (userId: string, fileId: string) => tenant(userId).get<PendingUpload>(keys.pendingUpload(userId, fileId), true);

/** The pending upload a confirmed file came from is gone when `addFile` returns; false when another confirmation took it first. */
export class UploadAlreadyConfirmedError extends Error {}

export async function addFile(userId: string, file: StoredFile, limitBytes: number, fromPendingUpload?: string): Promise<void> {
  try {
    await transactRetrying([
      tx.put({ ...keys.storedFile(userId, file.fileId), ...file }, { expression: 'attribute_not_exists(pk)' }),
      tx.update(
        keys.fileStorageUsage(userId),
        { expression: 'ADD usedBytes :size', values: { ':size': file.size } },
        {
          expression: '(attribute_not_exists(usedBytes) AND :size <= :limit) OR usedBytes <= :room',
          values: { ':limit': limitBytes, ':room': limitBytes - file.size },
        },
      ),
      ...(fromPendingUpload ? [tx.delete(keys.pendingUpload(userId, fromPendingUpload), { expression: 'attribute_exists(pk)' })] : []),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed')
      throw new StorageQuotaError(await usedBytes(userId), limitBytes, file.size);
    if (err instanceof ConditionFailedError && (err.reasons[0] === 'ConditionalCheckFailed' || err.reasons[2] === 'ConditionalCheckFailed')) {
      if (fromPendingUpload) throw new UploadAlreadyConfirmedError('upload already confirmed');
    }
    throw err;
  }
}

/** Removes the record and gives its bytes back; false when it was already gone. */
export async function removeFile(userId: string, file: StoredFile): Promise<boolean> {
  try {
    await transactRetrying([
      tx.delete(keys.storedFile(userId, file.fileId), { expression: 'attribute_exists(pk)' }),
      tx.update(keys.fileStorageUsage(userId), { expression: 'ADD usedBytes :minus', values: { ':minus': -file.size } }),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export const getFile = (userId: string, fileId: string) => tenant(userId).get<StoredFile>(keys.storedFile(userId, fileId), true);
export const listFiles = (userId: string) => tenant(userId).queryAll<StoredFile>(keys.storedFilePrefix, { consistent: true });
export async function usedBytes(userId: string): Promise<number> {
  return Number((await tenant(userId).get<{ usedBytes?: number }>(keys.fileStorageUsage(userId), true))?.usedBytes ?? 0);
}
