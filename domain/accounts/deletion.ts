import { sendEmail } from '#adapters/email';
import { JWT_LIFETIME_SECONDS } from '#domain/auth/jwt';
import {
  createDeletionMarker,
  deleteAccountKeepingSessionGate,
  getDeletedAccountRecord,
  getDeletionMarker,
  updateDeletionMarker,
  writeDeletedAccountRecord,
  type DeletionMarker,
} from '#data/account-deletion';
import { emitEvent, userEventData } from '#adapters/events-queue';

/**
 * Account deletion in two halves. The request (settings) proves ownership, revokes sessions and
 * keys and writes the `DELETION` marker: the account is `deleting`. What the account owns outside
 * the table (its instance, its card subscription) is ended by the deletion worker (provisioner),
 * which records each step on the marker, so a retry after a failure part-way resumes; the data is
 * deleted last, and the user gets the final email.
 */

/** Kept as long as the processor's records matter to a refund or dispute. */
const TOMBSTONE_TTL_SECONDS = 400 * 86400;

export type { DeletionMarker };

export async function beginAccountDeletion(userId: string, who: { email: string; name: string }, now = new Date()): Promise<DeletionMarker> {
  const marker: DeletionMarker = { state: 'deleting', requestedAt: now.toISOString(), email: who.email, name: who.name };
  // An account already being deleted keeps the marker it has, with the steps done so far.
  if (await createDeletionMarker(userId, marker)) return marker;
  return (await deletionMarker(userId))!;
}

export const deletionMarker = getDeletionMarker;

export const recordDeletionStep = updateDeletionMarker;

/** What a finished deletion did, after the partition is gone (e.g. which subscription it cancelled). */
export const deletedAccountRecord = getDeletedAccountRecord;

/**
 * The last step: the account's data goes (the session revocation record stays past the longest
 * token lifetime, so old tokens can never write into the partition again), the tombstone keeps
 * what was cancelled, `user.deleted` is emitted and the final email sent.
 */
export async function completeAccountDeletion(userId: string, marker: DeletionMarker, now = new Date()): Promise<void> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  await writeDeletedAccountRecord(userId, {
    deletedAt: now.toISOString(),
    requestedAt: marker.requestedAt,
    instanceStopped: marker.instanceStopped ?? false,
    ...(marker.subscriptionId ? { subscriptionId: marker.subscriptionId, subscriptionCancelled: marker.subscriptionCancelled } : {}),
    expiresAt: nowSeconds + TOMBSTONE_TTL_SECONDS,
  });
  const deleted = await deleteAccountKeepingSessionGate(userId, nowSeconds + JWT_LIFETIME_SECONDS + 3600);
  if (!deleted) return;
  await emitEvent('user.deleted', userEventData(deleted, { deletedAt: now.toISOString() }));
  await sendEmail({
    to: marker.email,
    subject: 'Your account has been deleted',
    text:
      `The account for ${marker.email} has been deleted, as you asked on ${marker.requestedAt}.\n\n` +
      `Its agents were stopped and its data removed.${marker.subscriptionCancelled ? ' Its card subscription was cancelled: there will be no further charges.' : ''}\n`,
  });
}
