import { requestProvisioning } from '#adapters/provisioning-queue';
import { ownerRights } from '#domain/auth/runtime-agent';
import { getInstance, transitionInstance } from '#data/instances';
import { accessFrom, getSubscription } from './entitlements';

/** The `stopReason` (and the `instance.stopped` event's `reason`) of an instance stopped because its subscription ended. */
export const SUBSCRIPTION_ENDED = 'subscription-ended';

/**
 * Stops the account's instance once no subscription is in force (admins are exempt, as everywhere):
 * a paid subscription is required for all usage, and an instance left running would keep acting on
 * the outside world. The stop goes through the lifecycle state machine with `cause: billing`, so
 * the `instance.stopped` event and its webhook say why; the owner starts it again after subscribing.
 * Idempotent: a stopped instance is left alone, so a redelivered event changes nothing.
 */
export async function stopWithoutSubscription(userId: string, now = new Date()): Promise<boolean> {
  const [rights, subscription, instance] = await Promise.all([ownerRights(userId), getSubscription(userId), getInstance(userId, true)]);
  if (!instance || instance.status === 'stopped') return false;
  const access = accessFrom({ userId, isAdmin: !!rights?.isAdmin, isTester: !!rights?.isTester }, subscription);
  if (access.isAdmin || access.subscriptionActive) return false;
  const { after, changed } = await transitionInstance(userId, 'stop', { jobOwner: (g) => `gen-${g}`, cause: 'billing', stopReason: SUBSCRIPTION_ENDED }, now);
  // The provisioner stops the process or task itself, as for the owner's stop.
  if (changed) await requestProvisioning({ kind: 'lifecycle', userId, generation: after.generation, op: 'stop' });
  return changed;
}
