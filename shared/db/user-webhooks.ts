import { randomBytes } from 'node:crypto';
import { decrypt, encrypt, type EnvelopeRecord } from '../crypto/envelope';
import { keys } from './keys';
import { ConditionFailedError, tenant, tx } from './tenant';
import { transactRetrying } from './transact-retry';

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
}

interface StoredEndpoint extends UserWebhookEndpoint, Record<string, unknown> {
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
}

export class EndpointLimitError extends Error {}

const publicView = ({ id, url, events, createdAt }: UserWebhookEndpoint): UserWebhookEndpoint => ({ id, url, events, createdAt });

/** Whether an endpoint registered for `filters` takes an event of `type` (`instance.*` selects a family). */
export const takesEvent = (filters: string[], type: string) => filters.some((f) => f === type || (f.endsWith('.*') && type.startsWith(f.slice(0, -1))));

export async function createUserWebhook(
  userId: string,
  url: string,
  events: string[],
  cap: number,
): Promise<{ endpoint: UserWebhookEndpoint; secret: string }> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const endpoint: UserWebhookEndpoint = { id: `whe_${randomBytes(9).toString('base64url')}`, url, events, createdAt: new Date().toISOString() };
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
    if (err instanceof ConditionFailedError && err.reasons[1] === 'ConditionalCheckFailed') throw new EndpointLimitError('webhook endpoint limit reached');
    throw err;
  }
  return { endpoint, secret };
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

/** The endpoints that take an event of `type`, with their secrets opened for signing (delivery worker only). */
export async function endpointsForEvent(userId: string, type: string): Promise<OpenedEndpoint[]> {
  const all = await tenant(userId).queryAll<StoredEndpoint>(keys.userWebhookPrefix, { consistent: true });
  return Promise.all(all.filter((e) => takesEvent(e.events, type)).map((e) => opened(userId, e)));
}

/** One endpoint a message was addressed to (the webhook skill), its secret opened; none once it was removed. */
export async function endpointForMessage(userId: string, endpointId: string): Promise<OpenedEndpoint[]> {
  const item = await tenant(userId).get<StoredEndpoint>(keys.userWebhook(userId, endpointId), true);
  return item ? [await opened(userId, item)] : [];
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
