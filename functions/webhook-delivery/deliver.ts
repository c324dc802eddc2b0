import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import * as z from 'zod';
import { config } from '../../shared/config';
import { keys } from '../../shared/db/keys';
import { getGlobal, transact, tx } from '../../shared/db/tenant';
import type { MessageEventType, PlatformEvent } from '../../shared/events/emit';
import { guardedFetch } from '../../shared/adapters/guarded-fetch';
import { MESSAGE_EVENT_TYPE } from '../../shared/contract/skill-actions/development-creative';
import { assertPublicHttpsUrl } from '../../shared/adapters/url-guard';
import { ACCOUNT_EVENT_TYPES } from '../../shared/contract/webhooks';
import { endpointForMessage, endpointsForEvent, recordDeliveryAttempt } from '../../shared/db/user-webhooks';

export const DELIVERY_TIMEOUT_MS = 5000;
/** As long as SQS keeps a message (4 days by default): a retry never finds its record expired. */
const DELIVERY_RECORD_TTL_SECONDS = 4 * 24 * 3600;

const PLATFORM_EVENT_TYPES = ['user.created', 'user.updated', 'user.deleted', ...ACCOUNT_EVENT_TYPES] as const;

export const PlatformEventSchema = z
  .object({
    id: z.string().min(1).max(100),
    type: z.union([z.enum(PLATFORM_EVENT_TYPES), z.custom<MessageEventType>((t) => typeof t === 'string' && MESSAGE_EVENT_TYPE.test(t))]),
    timestamp: z.string(),
    data: z.record(z.string(), z.unknown()),
    accountId: z.string().min(1).max(128).optional(),
    endpointId: z.string().min(1).max(64).optional(),
  })
  // A type of the user's own naming only travels as a webhook skill message to one endpoint.
  .refine((e) => (PLATFORM_EVENT_TYPES as readonly string[]).includes(e.type) || (e.accountId && e.endpointId), 'unknown event type');

const endpointHash = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 32);
/** Hosts only in logs: a receiver URL may carry a token in its path or query. */
const hostOf = (url: string) => new URL(url).host;

/**
 * One signed POST (Standard Webhooks: `webhook-id` is the event id, so receivers can drop
 * duplicates; `webhook-timestamp` in seconds; `webhook-signature` `v1,<base64 HMAC-SHA256>`).
 * Redirects are not followed and the call is bounded; anything but a 2xx is a failure.
 */
export class DeliveryRefusedError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
  }
}

/**
 * A URL a user typed for the webhook skill (a message addressed to one endpoint) goes through the
 * guarded fetch in every stage: resolved once, pinned, public addresses only, no redirects.
 * Operator and account endpoints keep the registration-time check, in AWS.
 */
export async function postSigned(url: string, event: PlatformEvent, signer: Webhook): Promise<number> {
  const payload = JSON.stringify(wireEvent(event));
  const sentAt = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'agent-platform-webhooks/1',
    'webhook-id': event.id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signer.sign(event.id, sentAt, payload),
  };
  let status: number;
  if (event.endpointId) {
    status = (await guardedFetch(url, { method: 'POST', headers, body: payload, maxRedirects: 0, maxBytes: 64 * 1024, timeoutMs: DELIVERY_TIMEOUT_MS })).status;
  } else {
    if (config().stage === 'aws') await assertPublicHttpsUrl(url);
    const res = await fetch(url, { method: 'POST', headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    await res.body?.cancel();
    status = res.status;
  }
  if (status < 200 || status >= 300) throw new DeliveryRefusedError(`${hostOf(url)} answered ${status}`, status);
  return status;
}

/** What receivers get: the event without the routing fields (the account is in `data.userId`). */
const wireEvent = ({ accountId: _routing, endpointId: _endpoint, ...event }: PlatformEvent) => event;

const alreadyDelivered = async (eventId: string, url: string) => !!(await getGlobal(keys.webhookDelivery(eventId, endpointHash(url)), true));

async function recordDelivery(eventId: string, url: string): Promise<void> {
  const expiresAt = Math.floor(Date.now() / 1000) + DELIVERY_RECORD_TTL_SECONDS;
  await transact([tx.put({ ...keys.webhookDelivery(eventId, endpointHash(url)), deliveredAt: new Date().toISOString(), expiresAt })]);
}

/**
 * Sends one event to every configured endpoint. On a redelivery (`retry`) the endpoints that
 * already took the event are skipped, so one failing receiver does not flood the others with
 * duplicates. Throws when any endpoint failed, listing the hosts.
 */
export async function deliverEvent(event: PlatformEvent, retry: boolean, attempt = retry ? 2 : 1): Promise<void> {
  if (event.accountId) return deliverAccountEvent(event.accountId, event, attempt);
  const { endpoints, secret } = config().webhooks;
  if (!endpoints.length) return;
  if (!secret) throw new Error('WEBHOOK_ENDPOINTS is set but WEBHOOK_SECRET is not');
  const signer = new Webhook(secret);
  const results = await Promise.allSettled(
    endpoints.map(async (url) => {
      if (retry && (await alreadyDelivered(event.id, url))) return;
      await postSigned(url, event, signer);
      await recordDelivery(event.id, url);
    }),
  );
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${hostOf(endpoints[i]!)}: ${(r.reason as Error)?.message}`] : []));
  if (failed.length) throw new Error(`webhook delivery failed for ${failed.join('; ')}`);
}

/**
 * An account event goes to the endpoints that account registered for its type, each signed with
 * its own secret. Every attempt lands in the endpoint's delivery log; on a retry the endpoints
 * that already took the event are skipped. Throws when any endpoint failed, so SQS retries.
 */
async function deliverAccountEvent(userId: string, event: PlatformEvent, attempt: number): Promise<void> {
  const endpoints = event.endpointId ? await endpointForMessage(userId, event.endpointId) : await endpointsForEvent(userId, event.type);
  const results = await Promise.allSettled(
    endpoints.map(async (endpoint) => {
      if (attempt > 1 && (await alreadyDelivered(event.id, endpoint.id))) return;
      const logged = { eventId: event.id, type: event.type, attempt };
      try {
        const statusCode = await postSigned(endpoint.url, event, new Webhook(endpoint.secret));
        await recordDelivery(event.id, endpoint.id);
        await recordDeliveryAttempt(userId, endpoint.id, { ...logged, outcome: 'delivered', statusCode, at: new Date().toISOString() });
      } catch (err) {
        const statusCode = err instanceof DeliveryRefusedError ? err.statusCode : undefined;
        await recordDeliveryAttempt(userId, endpoint.id, {
          ...logged,
          outcome: 'failed',
          statusCode,
          error: (err as Error).message.slice(0, 300),
          at: new Date().toISOString(),
        });
        throw err;
      }
    }),
  );
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${endpoints[i]!.id}: ${(r.reason as Error)?.message}`] : []));
  if (failed.length) throw new Error(`account webhook delivery failed for ${failed.join('; ')}`);
}
