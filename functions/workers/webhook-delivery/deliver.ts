import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import * as z from 'zod/mini';
import { config, webhooksConfig } from '#platform/config';
import { type MessageEventType, type PlatformEvent, queueDelivery } from '#adapters/events-queue';
import { guardedFetch } from '#adapters/guarded-fetch';
import { ACCOUNT_EVENT_TYPES, MESSAGE_EVENT_TYPE } from '#contract/webhook-events';
import {
  endpointForMessage,
  endpointsForEvent,
  noteEndpointFailure,
  noteEndpointSuccess,
  recordDeliveryAttempt,
  type UserWebhookEndpoint,
} from '#data/user-webhooks';
import { type DeliveryTarget, readDeliveryState, recordAttemptOutcome } from '#data/webhook-deliveries';
import { logger } from '#http/logger';
import { lazySchema } from '#contract/lazy-schema';

export const DELIVERY_TIMEOUT_MS = 5000;

const PLATFORM_EVENT_TYPES = ['user.created', 'user.updated', 'user.deleted', ...ACCOUNT_EVENT_TYPES] as const;

export const PlatformEventSchema = lazySchema(() =>
  z
    .object({
      id: z.string().check(z.minLength(1), z.maxLength(100)),
      type: z.union([z.enum(PLATFORM_EVENT_TYPES), z.custom<MessageEventType>((t) => typeof t === 'string' && MESSAGE_EVENT_TYPE.test(t))]),
      timestamp: z.string(),
      data: z.record(z.string(), z.unknown()),
      accountId: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
      endpointId: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
      delivery: z.optional(
        z.strictObject({
          target: z.string().check(z.minLength(1), z.maxLength(64)),
          step: z.number().check(z.int(), z.minimum(1), z.maximum(100)),
          dueAt: z.iso.datetime(),
          manual: z.optional(z.boolean()),
        }),
      ),
    })
    // A type of the user's own naming only travels as a webhook skill message to one endpoint.
    .check(z.refine((e) => (PLATFORM_EVENT_TYPES as readonly string[]).includes(e.type) || !!(e.accountId && e.endpointId), 'unknown event type')),
);

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
 * Every delivery goes through the guarded fetch, in every stage: the name resolved once, only the
 * vetted address connected to (a name that answers a public address for the check and an internal
 * one for the connection reaches nothing new), no redirects. A URL a user typed for the webhook
 * skill (a message addressed to one endpoint) may reach public addresses only; operator and account
 * endpoints also their local receivers on loopback outside AWS, and only https in AWS.
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
  const registered = !event.endpointId;
  const { status } = await guardedFetch(url, {
    method: 'POST',
    headers,
    body: payload,
    maxRedirects: 0,
    maxBytes: 64 * 1024,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    loopbackOutsideAws: registered,
    httpsOnly: registered && config().stage === 'aws',
  });
  if (status < 200 || status >= 300) throw new DeliveryRefusedError(`${hostOf(url)} answered ${status}`, status);
  return status;
}

/** What receivers get: the event without the routing fields (the account is in `data.userId`). */
const wireEvent = ({ accountId: _routing, endpointId: _endpoint, delivery: _delivery, ...event }: PlatformEvent) => event;

/** The event as it was first queued, without a retry's addressing. */
const withoutDirective = ({ delivery: _delivery, ...event }: PlatformEvent): PlatformEvent => event;

interface AttemptReport {
  attempt: number;
  delivered: boolean;
  statusCode?: number;
  error?: string;
  at: Date;
  durationMs: number;
  nextAttemptAt?: string;
  manual: boolean;
}

interface Destination {
  state: DeliveryTarget;
  /** How a retry names this destination (`delivery.target`). */
  retryTarget: string;
  send(): Promise<number>;
  /** Account endpoints keep the event for a redelivery. */
  keepsEvent: boolean;
  after(report: AttemptReport): Promise<void>;
}

/**
 * One attempt at one destination. The automatic attempts follow the retry schedule (step 1 is the
 * first try, step n+1 comes `WEBHOOK_RETRY_SCHEDULE_MS[n-1]` after step n fails); a step already
 * recorded, or an event already delivered there, is skipped, so a duplicate SQS delivery sends
 * nothing twice. The next step is queued before the outcome is stored: a crash in between repeats
 * this step's attempt (receivers drop it by its `webhook-id`) rather than lose the schedule.
 */
async function attemptAt(event: PlatformEvent, destination: Destination): Promise<void> {
  const manual = event.delivery?.manual === true;
  const step = manual ? undefined : (event.delivery?.step ?? 1);
  const state = await readDeliveryState(destination.state);
  if (step !== undefined && (state?.status === 'delivered' || (state?.lastStep ?? 0) >= step)) return;
  const at = new Date();
  const started = performance.now();
  let statusCode: number | undefined;
  let error: string | undefined;
  try {
    statusCode = await destination.send();
  } catch (err) {
    statusCode = err instanceof DeliveryRefusedError ? err.statusCode : undefined;
    error = (err as Error).message.slice(0, 300);
  }
  const durationMs = Math.round(performance.now() - started);
  const delivered = error === undefined;
  const original = withoutDirective(event);
  let nextAttemptAt: string | undefined;
  const delay = step === undefined ? undefined : webhooksConfig().retryScheduleMs[step - 1];
  if (!delivered && step !== undefined && delay !== undefined) {
    nextAttemptAt = new Date(Date.now() + delay).toISOString();
    await queueDelivery({ ...original, delivery: { target: destination.retryTarget, step: step + 1, dueAt: nextAttemptAt } });
  }
  await recordAttemptOutcome(destination.state, {
    delivered,
    at,
    step,
    nextAttemptAt,
    eventJson: destination.keepsEvent ? JSON.stringify(original) : undefined,
  });
  await destination.after({ attempt: (state?.attempts ?? 0) + 1, delivered, statusCode, error, at, durationMs, nextAttemptAt, manual });
}

/** Runs every attempt; throws (so SQS retries the message) only when one could not be carried out or recorded. */
async function attemptAll(event: PlatformEvent, destinations: Destination[], names: string[]): Promise<void> {
  const results = await Promise.allSettled(destinations.map((d) => attemptAt(event, d)));
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${names[i]}: ${(r.reason as Error)?.message}`] : []));
  if (failed.length) throw new Error(`webhook delivery could not be carried out for ${failed.join('; ')}`);
}

/**
 * Sends one event to its endpoints: the operator's (WEBHOOK_ENDPOINTS) for user events, the
 * account's own for account events and webhook skill messages, or the one endpoint a retry or a
 * redelivery names. A receiver that fails gets its next attempt queued on the schedule.
 */
export async function deliverEvent(event: PlatformEvent): Promise<void> {
  if (event.accountId) return deliverAccountEvent(event.accountId, event);
  const { endpoints, secret } = webhooksConfig();
  const targets = event.delivery ? endpoints.filter((url) => endpointHash(url) === event.delivery!.target) : endpoints;
  if (!targets.length) return;
  if (!secret) throw new Error('WEBHOOK_ENDPOINTS is set but WEBHOOK_SECRET is not');
  const signer = new Webhook(secret);
  const destinations = targets.map(
    (url): Destination => ({
      state: { urlHash: endpointHash(url), eventId: event.id },
      retryTarget: endpointHash(url),
      send: () => postSigned(url, event, signer),
      keepsEvent: false,
      after: async (report) => {
        if (!report.delivered) logger().warn('webhook not delivered', { host: hostOf(url), eventId: event.id, ...report, at: report.at.toISOString() });
      },
    }),
  );
  await attemptAll(event, destinations, targets.map(hostOf));
}

/**
 * An account event goes to the enabled endpoints that account registered for its type, each
 * signed with its own secret; every attempt lands in the endpoint's delivery log, and a streak of
 * failures as long as WEBHOOK_DISABLE_AFTER_MS disables the endpoint and mails its owner once.
 */
async function deliverAccountEvent(userId: string, event: PlatformEvent): Promise<void> {
  const addressed = event.delivery?.target ?? event.endpointId;
  const endpoints = addressed ? await endpointForMessage(userId, addressed) : await endpointsForEvent(userId, event.type);
  const destinations = endpoints.map(
    (endpoint): Destination => ({
      state: { userId, endpointId: endpoint.id, eventId: event.id },
      retryTarget: endpoint.id,
      send: () => postSigned(endpoint.url, event, new Webhook(endpoint.secret)),
      keepsEvent: true,
      after: (report) => afterAccountAttempt(userId, endpoint, event, report),
    }),
  );
  await attemptAll(
    event,
    destinations,
    endpoints.map((e) => e.id),
  );
}

async function afterAccountAttempt(userId: string, endpoint: UserWebhookEndpoint, event: PlatformEvent, report: AttemptReport): Promise<void> {
  await recordDeliveryAttempt(userId, endpoint.id, {
    eventId: event.id,
    type: event.type,
    attempt: report.attempt,
    outcome: report.delivered ? 'delivered' : 'failed',
    statusCode: report.statusCode,
    error: report.error,
    at: report.at.toISOString(),
    durationMs: report.durationMs,
    nextAttemptAt: report.nextAttemptAt,
    manual: report.manual || undefined,
  });
  if (report.delivered) {
    if (endpoint.failingSince) await noteEndpointSuccess(userId, endpoint.id);
    return;
  }
  logger().info('account webhook not delivered', {
    userId,
    endpointId: endpoint.id,
    eventId: event.id,
    attempt: report.attempt,
    statusCode: report.statusCode,
    error: report.error,
    nextAttemptAt: report.nextAttemptAt,
  });
  if (await noteEndpointFailure(userId, endpoint.id, report.at, webhooksConfig().disableAfterMs)) {
    // Loaded by the first endpoint disabled, like the mailer: the worker's init carries no mail code.
    await (await import('./disabled-notice')).mailEndpointDisabled(userId, endpoint, webhooksConfig().disableAfterMs);
  }
}
