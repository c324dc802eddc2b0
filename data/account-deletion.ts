import * as keys from './keys';
import { ConditionFailedError, getGlobal, tenant, transact, tx } from './tenant';
import { deleteAccount } from './users';

/**
 * The records of an account deletion: the `DELETION` marker in the account's partition, on which
 * the deletion worker records each step it has done, and the `DELETEDACCOUNT#` tombstone, a global
 * item that outlives the partition and keeps what the deletion cancelled.
 */
export interface DeletionMarker extends Record<string, unknown> {
  state: 'deleting';
  requestedAt: string;
  email: string;
  name: string;
  instanceStopped?: boolean;
  subscriptionId?: string;
  /** The processor's answer to the cancellation, once it is done. */
  subscriptionCancelled?: { status: string; at: string };
}

export interface DeletedAccountRecord extends Record<string, unknown> {
  deletedAt: string;
  requestedAt: string;
  instanceStopped: boolean;
  subscriptionId?: string;
  subscriptionCancelled?: { status: string; at: string };
  /** Epoch seconds; the item's TTL. */
  expiresAt: number;
}

/** Writes the marker unless the account already has one; false when it had (a deletion is under way). */
export async function createDeletionMarker(userId: string, marker: DeletionMarker): Promise<boolean> {
  try {
    await tenant(userId).put({ ...keys.accountDeletion(userId), ...marker }, { expression: 'attribute_not_exists(pk)' });
    return true;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return false;
  }
}

export const getDeletionMarker = (userId: string) => tenant(userId).get<DeletionMarker>(keys.accountDeletion(userId), true);

/** Sets the given fields of the marker, leaving the others as they are. */
export async function updateDeletionMarker(userId: string, step: Partial<DeletionMarker>): Promise<void> {
  const entries = Object.entries(step);
  await tenant(userId).update(keys.accountDeletion(userId), {
    expression: `SET ${entries.map((_e, i) => `#f${i} = :v${i}`).join(', ')}`,
    names: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
    values: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
  });
}

export const getDeletedAccountRecord = (userId: string) => getGlobal<Record<string, unknown>>(keys.deletedAccount(userId), true);

export async function writeDeletedAccountRecord(userId: string, record: DeletedAccountRecord): Promise<void> {
  await transact([tx.put({ ...keys.deletedAccount(userId), ...record })]);
}

/**
 * Deletes the account's data but for its session revocation gate, which is given a TTL of
 * `gateUntil` (epoch seconds): until then the account's unexpired tokens stay refused, so none can
 * write into the partition again. Returns the deleted profile, or undefined when there was none.
 */
export const deleteAccountKeepingSessionGate = (userId: string, gateUntil: number) =>
  deleteAccount(userId, { retain: [keys.sessionGate(userId)], retainUntil: gateUntil });
