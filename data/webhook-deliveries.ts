import * as keys from './keys';
import type { Key } from './keys';
import { type Condition, ConditionFailedError, getGlobal, tenant, transact, tx } from './tenant';

/**
 * Where one event stands at one endpoint: how many attempts it had, the last automatic
 * step of the retry schedule that ran, when the next one is due, and (account endpoints) the event
 * itself, so its owner can ask for a redelivery. An account endpoint's record is in the account's
 * partition (`HOOKSTATE#<endpointId>#<eventId>`); an operator endpoint's (WEBHOOK_ENDPOINTS) is
 * global, by event and URL hash. Kept 30 days, like the delivery log.
 */

const STATE_TTL_SECONDS = 30 * 24 * 3600;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryState {
  status?: DeliveryStatus;
  attempts?: number;
  /** The last step of the retry schedule that ran (1 = the first attempt); a repeated message for it is skipped. */
  lastStep?: number;
  nextAttemptAt?: string;
  lastAttemptAt?: string;
  /** The event as queued (JSON), for a manual redelivery. */
  eventJson?: string;
}

export type DeliveryTarget = { userId: string; endpointId: string; eventId: string } | { urlHash: string; eventId: string };

const keyOf = (t: DeliveryTarget): Key =>
  'userId' in t ? keys.userWebhookDeliveryState(t.userId, t.endpointId, t.eventId) : keys.webhookDelivery(t.eventId, t.urlHash);

export async function readDeliveryState(t: DeliveryTarget): Promise<DeliveryState | undefined> {
  return 'userId' in t
    ? tenant(t.userId).get<DeliveryState & Record<string, unknown>>(keyOf(t), true)
    : getGlobal<DeliveryState & Record<string, unknown>>(keyOf(t), true);
}

export interface AttemptOutcome {
  delivered: boolean;
  at: Date;
  /** The schedule step of an automatic attempt; none for a manual redelivery. */
  step?: number;
  /** When the next automatic attempt is due; none when the schedule is exhausted or the attempt succeeded. */
  nextAttemptAt?: string;
  eventJson?: string;
}

/**
 * Records one attempt. An automatic step is recorded once (a duplicate SQS delivery of the same
 * step finds it done), and never over a delivery that already succeeded. A manual redelivery that
 * fails leaves the automatic schedule's status and next attempt as they are. False when the
 * condition found the step already recorded.
 */
export async function recordAttemptOutcome(t: DeliveryTarget, o: AttemptOutcome): Promise<boolean> {
  // DynamoDB refuses a name the expressions do not use: the status is named only where it is read or set.
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':one': 1,
    ':zero': 0,
    ':at': o.at.toISOString(),
    ':ttl': Math.floor(o.at.getTime() / 1000) + STATE_TTL_SECONDS,
  };
  const sets = ['attempts = if_not_exists(attempts, :zero) + :one', 'lastAttemptAt = :at', 'expiresAt = :ttl'];
  const removes: string[] = [];
  if (o.eventJson) {
    sets.push('eventJson = if_not_exists(eventJson, :event)');
    values[':event'] = o.eventJson;
  }
  const automatic = o.step !== undefined;
  if (o.delivered || automatic) {
    names['#status'] = 'status';
    sets.push('#status = :status');
    values[':status'] = o.delivered ? 'delivered' : o.nextAttemptAt ? 'pending' : 'failed';
    if (o.nextAttemptAt) {
      sets.push('nextAttemptAt = :next');
      values[':next'] = o.nextAttemptAt;
    } else removes.push('nextAttemptAt');
  }
  let condition: Condition | undefined;
  if (automatic) {
    sets.push('lastStep = :step');
    names['#status'] = 'status';
    condition = {
      expression: '(attribute_not_exists(lastStep) OR lastStep < :step) AND (attribute_not_exists(#status) OR #status <> :delivered)',
      values: { ':step': o.step, ':delivered': 'delivered' },
    };
  }
  const update: Condition = {
    expression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    names: Object.keys(names).length ? names : undefined,
    values,
  };
  try {
    if ('userId' in t) await tenant(t.userId).update(keyOf(t), update, condition);
    else await transact([tx.update(keyOf(t), update, condition)]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}
