import { keys } from '../keys';
import { ConditionFailedError, tenant, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';

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

export class StorageQuotaError extends Error {}

export async function addFile(userId: string, file: StoredFile, limitBytes: number): Promise<void> {
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
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed') throw new StorageQuotaError('storage quota reached');
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
