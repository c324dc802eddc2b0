import { cancelSubscription } from '#adapters/card';
import { accountObjectPrefixes, fileStorage } from '#adapters/file-storage';
import { launcher } from '#adapters/launcher';
import { requestProvisioning } from '#adapters/provisioning-queue';
import { completeAccountDeletion, deletionMarker, recordDeletionStep } from '#domain/accounts/deletion';
import { ACTIVE_STATUSES, getSubscription } from '#domain/billing/entitlements';
import { getInstance, NoInstanceError, transitionInstance } from '#data/instances';
import { logger } from '#http/logger';

/** Statuses in which the processor may still charge the card. */
const CHARGEABLE = new Set([...ACTIVE_STATUSES, 'past_due', 'unpaid', 'incomplete']);

/**
 * The deletion worker: ends what the account owns outside the table, then deletes its data. Each
 * step is idempotent and recorded on the account's `DELETION` marker; any failure throws, so SQS
 * delivers the message again (and the DLQ handler re-queues it) until the account is gone.
 */
export async function runAccountDeletion(userId: string): Promise<void> {
  let marker = await deletionMarker(userId);
  if (!marker) return;

  if (!marker.instanceStopped) {
    try {
      // A stop supersedes any launch in flight: its job finds its generation stale and stops its own process.
      await transitionInstance(userId, 'stop', { cause: 'account-deletion' });
    } catch (err) {
      if (!(err instanceof NoInstanceError)) throw err;
    }
    const handle = (await getInstance(userId, true))?.handle;
    if (handle) await (await launcher()).stop(handle, 'account deleted');
    await recordDeletionStep(userId, { instanceStopped: true });
  }

  const sub = await getSubscription(userId);
  if (sub?.subscriptionId && !marker.subscriptionCancelled && CHARGEABLE.has(sub.status)) {
    const { status } = await cancelSubscription(sub.subscriptionId);
    await recordDeletionStep(userId, { subscriptionId: sub.subscriptionId, subscriptionCancelled: { status, at: new Date().toISOString() } });
    logger().info('account deletion cancelled the card subscription', { userId, subscriptionId: sub.subscriptionId, status });
  }

  await deleteStoredFiles(userId);

  marker = (await deletionMarker(userId))!;
  await completeAccountDeletion(userId, marker);
}

/**
 * The file-manager's bytes and the agents' checkpoints live outside the table: every object of the account goes, confirmed or
 * still pending. Listing again on a retry makes the step idempotent without a marker.
 */
async function deleteStoredFiles(userId: string): Promise<void> {
  const storage = fileStorage();
  // The trailing slash keeps `u_1/` from also matching `u_10/` in a bucket listing.
  const prefixes = accountObjectPrefixes(userId);
  const objectKeys = (await Promise.all(prefixes.map((prefix) => storage.list(prefix)))).flat();
  for (const objectKey of objectKeys) await storage.delete(objectKey);
  if (objectKeys.length) logger().info('account deletion removed stored files', { userId, files: objectKeys.length });
}

/** From the DLQ: a deletion is never given up; it goes back on the queue for another round of retries. */
export async function requeueAccountDeletion(userId: string): Promise<void> {
  await requestProvisioning({ kind: 'account-deletion', userId });
}
