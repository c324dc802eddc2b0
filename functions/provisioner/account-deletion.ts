import { cancelSubscription } from '../../shared/adapters/card';
import { launcher, requestProvisioning } from '../../shared/adapters/launcher';
import { completeAccountDeletion, deletionMarker, recordDeletionStep } from '../../shared/accounts/deletion';
import { ACTIVE_STATUSES, getSubscription } from '../../shared/billing/entitlements';
import { getInstance, NoInstanceError, transitionInstance } from '../../shared/db/instances';
import { logger } from '../../shared/http/logger';

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

  marker = (await deletionMarker(userId))!;
  await completeAccountDeletion(userId, marker);
}

/** From the DLQ: a deletion is never given up; it goes back on the queue for another round of retries. */
export async function requeueAccountDeletion(userId: string): Promise<void> {
  await requestProvisioning({ kind: 'account-deletion', userId });
}
