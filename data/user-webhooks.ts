import { randomBytes } from 'node:crypto';
import { decrypt, encrypt, type EnvelopeRecord } from '#platform/crypto/envelope';
import * as keys from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';
import { DomainError } from '#platform/errors';

/**
 * The account's own webhook endpoints (`USER#<id> / USERHOOK#<endpointId>`) and each one's
 * delivery log (`HOOKLOG#<endpointId>#<time>#<random>`, 30 days). The signing secret is stored
 * envelope-encrypted (the delivery worker must sign with it, so a hash would not do) and shown once.
 */

const SECRET_PURPOSE = 'user-webhook-secret';
const DELIVERY_LOG_TTL_SECONDS = 30 * 24 * 3600;

export interface UserWebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  /** False once disabled (after failing for the whole disable window, or by its owner): nothing is sent to it. */
  enabled: boolean;
  disabledAt?: string;
  disabledReason?: string;
  /** The first failure since the last success; cleared by a success. */
  failingSince?: string;
}

interface EndpointState {
  disabledAt?: string;
  disabledReason?: string;
  failingSince?: string;
}

interface StoredEndpoint extends Omit<UserWebhookEndpoint, 'enabled'>, EndpointState, Record<string, unknown> {
  secret: EnvelopeRecord;
}

export interface DeliveryAttempt {
  eventId: string;
  type: string;
  attempt: number;
  outcome: 'delivered' | 'failed';
  statusCode?: number;
  error?: string;
  at: string;
  durationMs?: number;
  /** When the next automatic attempt is due; absent after a success or the last attempt. */
  nextAttemptAt?: string;
  /** An attempt the owner asked for (POST .../redeliver). */
  manual?: boolean;
}

export class EndpointLimitError extends DomainError {
  constructor(limit: number) {
    super('invalid', `an account holds at most ${limit} webhook endpoints`, 'ENDPOINT_LIMIT', { limit });
  }
}

const publicView = ({
  id,
  url,
  events,
  createdAt,
  disabledAt,
  disabledReason,
  failingSince,
}: Omit<UserWebhookEndpoint, 'enabled'> & EndpointState): UserWebhookEndpoint => ({
  id,
  url,
  events,
  createdAt,
  enabled: !disabledAt,
  ...(disabledAt ? { disabledAt, disabledReason } : {}),
  ...(failingSince ? { failingSince } : {}),
});

/** Whether an endpoint registered for `filters` takes an event of `type` (`instance.*` selects a family). */
export const takesEvent = (filters: string[], type: string) => filters.some((f) => f === type || (f.endsWith('.*') && type.startsWith(f.slice(0, -1))));

export async function createUserWebhook(
  userId: string,
  url: string,
  events: string[],
  cap: number,
): Promise<{ endpoint: UserWebhookEndpoint; secret: string }> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const endpoint = { id: `whe_${randomBytes(9).toString('base64url')}`, url, events, createdAt: new Date().toISOString() };
  try {
    await transactRetrying([
      tx.put(
        { ...keys.userWebhook(userId, endpoint.id), ...endpoint, secret: await encrypt(secret, { userId, purpose: SECRET_PURPOSE }) },
        { expression: 'attribute_not_exists(pk)' },
      ),
      tx.update(
        keys.userWebhookCount(userId),
        { expression: 'SET #count = if_not_exists(#count, :zero) + :one', names: { '#count': 'count' }, values: { ':zero': 0, ':one': 1 } },
        { expression: 'attribute_not_exists(#count) OR #count < :cap', values: { ':cap': cap } },
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed') throw new EndpointLimitError(cap);
    throw err;
  }
  return { endpoint: publicView(endpoint), secret };
}

export async function listUserWebhooks(userId: string): Promise<UserWebhookEndpoint[]> {
  return (await tenant(userId).queryAll<StoredEndpoint>(keys.userWebhookPrefix)).map(publicView);
}

export async function getUserWebhook(userId: string, endpointId: string): Promise<UserWebhookEndpoint | undefined> {
  const item = await tenant(userId).get<StoredEndpoint>(keys.userWebhook(userId, endpointId));
  return item ? publicView(item) : undefined;
}

/** False when the endpoint is not the account's. */
export async function deleteUserWebhook(userId: string, endpointId: string): Promise<boolean> {
  try {
    await transactRetrying([
      tx.delete(keys.userWebhook(userId, endpointId), { expression: 'attribute_exists(pk)' }),
      tx.update(keys.userWebhookCount(userId), {
        expression: 'SET #count = if_not_exists(#count, :one) - :one',
        names: { '#count': 'count' },
        values: { ':one': 1 },
      }),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError && err.reasons[0] === 'ConditionalCheckFailed') return false;
    throw err;
  }
}

type OpenedEndpoint = UserWebhookEndpoint & { secret: string };

const opened = async (userId: string, e: StoredEndpoint): Promise<OpenedEndpoint> => ({
  ...publicView(e),
  secret: (await decrypt(e.secret, { userId, purpose: SECRET_PURPOSE })).toString('utf8'),
});

/** The enabled endpoints that take an event of `type`, with their secrets opened for signing (delivery worker only). */
export async function endpointsForEvent(userId: string, type: string): Promise<OpenedEndpoint[]> {
  const all = await tenant(userId).queryAll<StoredEndpoint>(keys.userWebhookPrefix, { consistent: true });
  return Promise.all(all.filter((e) => !e.disabledAt && takesEvent(e.events, type)).map((e) => opened(userId, e)));
}

/** One endpoint a message or a retry was addressed to, its secret opened; none once it was removed or disabled. */
export async function endpointForMessage(userId: string, endpointId: string): Promise<OpenedEndpoint[]> {
  const item = await tenant(userId).get<StoredEndpoint>(keys.userWebhook(userId, endpointId), true);
  return item && !item.disabledAt ? [await opened(userId, item)] : [];
}

const OWNER_DISABLED = 'disabled by its owner';

/** Enables (clearing the failure streak) or disables an endpoint of the account; undefined when it is not the account's. */
export async function setUserWebhookEnabled(userId: string, endpointId: string, enabled: boolean): Promise<UserWebhookEndpoint | undefined> {
  const update = enabled
    ? { expression: 'REMOVE disabledAt, disabledReason, failingSince' }
    : { expression: 'SET disabledAt = :now, disabledReason = :reason', values: { ':now': new Date().toISOString(), ':reason': OWNER_DISABLED } };
  try {
    return publicView(await tenant(userId).update<StoredEndpoint>(keys.userWebhook(userId, endpointId), update, { expression: 'attribute_exists(pk)' }));
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/** A success ends the endpoint's failure streak. */
export async function noteEndpointSuccess(userId: string, endpointId: string): Promise<void> {
  try {
    await tenant(userId).update(keys.userWebhook(userId, endpointId), { expression: 'REMOVE failingSince' }, { expression: 'attribute_exists(failingSince)' });
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/**
 * A failure starts the endpoint's streak or extends it. When the streak has lasted `disableAfterMs`
 * the endpoint is disabled; true only for the one call that disabled it, so its owner is told once.
 */
export async function noteEndpointFailure(userId: string, endpointId: string, now: Date, disableAfterMs: number): Promise<boolean> {
  const key = keys.userWebhook(userId, endpointId);
  let item: StoredEndpoint;
  try {
    item = await tenant(userId).update<StoredEndpoint>(
      key,
      { expression: 'SET failingSince = if_not_exists(failingSince, :now)', values: { ':now': now.toISOString() } },
      { expression: 'attribute_exists(pk)' },
    );
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
  if (item.disabledAt || now.getTime() - Date.parse(item.failingSince!) < disableAfterMs) return false;
  const hours = Math.round(disableAfterMs / 360_000) / 10;
  try {
    await tenant(userId).update(
      key,
      {
        expression: 'SET disabledAt = :now, disabledReason = :reason',
        values: { ':now': now.toISOString(), ':reason': `every delivery failed for ${hours} hours` },
      },
      { expression: 'attribute_not_exists(disabledAt) AND failingSince = :since', values: { ':since': item.failingSince } },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export async function recordDeliveryAttempt(userId: string, endpointId: string, attempt: DeliveryAttempt): Promise<void> {
  const fields = Object.fromEntries(Object.entries(attempt).filter(([, v]) => v !== undefined));
  await tenant(userId).put({
    ...keys.userWebhookDelivery(userId, endpointId, `${attempt.at}#${randomBytes(6).toString('hex')}`),
    ...fields,
    expiresAt: Math.floor(Date.parse(attempt.at) / 1000) + DELIVERY_LOG_TTL_SECONDS,
  });
}

export async function listDeliveryAttempts(
  userId: string,
  endpointId: string,
  limit: number,
  cursor?: string,
): Promise<{ deliveries: DeliveryAttempt[]; cursor: string | null }> {
  const page = await tenant(userId).query<DeliveryAttempt & Record<string, unknown>>(keys.userWebhookDeliveryPrefix(endpointId), {
    limit,
    cursor,
    newestFirst: true,
  });
  const deliveries = page.items.map(({ pk: _pk, sk: _sk, expiresAt: _ttl, ...rest }) => rest as unknown as DeliveryAttempt);
  return { deliveries, cursor: page.cursor ?? null };
}
