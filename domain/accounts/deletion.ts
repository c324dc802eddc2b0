import { sendEmail } from '#adapters/email';
import { JWT_LIFETIME_SECONDS } from '#domain/auth/jwt';
import * as keys from '#data/keys';
import { ConditionFailedError, getGlobal, tenant, transact, tx } from '#data/tenant';
import { deleteAccount as removeAccount } from '#data/users';
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

export async function beginAccountDeletion(userId: string, who: { email: string; name: string }, now = new Date()): Promise<DeletionMarker> {
  const marker: DeletionMarker = { state: 'deleting', requestedAt: now.toISOString(), email: who.email, name: who.name };
  try {
    await tenant(userId).put({ ...keys.accountDeletion(userId), ...marker }, { expression: 'attribute_not_exists(pk)' });
    return marker;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return (await deletionMarker(userId))!;
  }
}

export const deletionMarker = (userId: string) => tenant(userId).get<DeletionMarker>(keys.accountDeletion(userId), true);

export async function recordDeletionStep(userId: string, step: Partial<DeletionMarker>): Promise<void> {
  const entries = Object.entries(step);
  await tenant(userId).update(keys.accountDeletion(userId), {
    expression: `SET ${entries.map((_e, i) => `#f${i} = :v${i}`).join(', ')}`,
    names: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
    values: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
  });
}

/** What a finished deletion did, after the partition is gone (e.g. which subscription it cancelled). */
export const deletedAccountRecord = (userId: string) => getGlobal<Record<string, unknown>>(keys.deletedAccount(userId), true);

/**
 * The last step: the account's data goes (the session revocation record stays past the longest
 * token lifetime, so old tokens can never write into the partition again), the tombstone keeps
 * what was cancelled, `user.deleted` is emitted and the final email sent.
 */
export async function completeAccountDeletion(userId: string, marker: DeletionMarker, now = new Date()): Promise<void> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  await transact([
    tx.put({
      ...keys.deletedAccount(userId),
      deletedAt: now.toISOString(),
      requestedAt: marker.requestedAt,
      instanceStopped: marker.instanceStopped ?? false,
      ...(marker.subscriptionId ? { subscriptionId: marker.subscriptionId, subscriptionCancelled: marker.subscriptionCancelled } : {}),
      expiresAt: nowSeconds + TOMBSTONE_TTL_SECONDS,
    }),
  ]);
  const gate = keys.sessionGate(userId);
  const deleted = await removeAccount(userId, { retain: [gate], retainUntil: nowSeconds + JWT_LIFETIME_SECONDS + 3600 });
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
