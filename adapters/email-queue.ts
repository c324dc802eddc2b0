import { randomUUID } from 'node:crypto';
import { config } from '#platform/config';
import type { EmailMessage } from './email';
import { sendJson } from './queue';

/**
 * Email sent later, by the events queue's worker (functions/workers/webhook-delivery/mailer.ts), instead of
 * in the request: the caller needs only the SQS client it already has for events, not the SES
 * client, which would weigh on the package and cold start of every function that meters model calls
 * (their spending-cap alerts mail the owner). The worker sends it once per id, retries what the mail service
 * did not take, and a message that keeps failing ends in the events queue's dead-letter queue.
 */
export interface QueuedEmail {
  kind: 'email';
  /** Unique per message: the worker's claim, so a redelivered SQS message is not mailed twice. */
  id: string;
  /** The account the mail is about; its claim lives in this account's partition. */
  userId: string;
  message: EmailMessage;
}

/** True for a message of the events queue that is a queued email rather than a platform event. */
export const isQueuedEmail = (body: unknown): boolean => (body as { kind?: unknown } | null)?.kind === 'email';

export class EmailQueueNotConfiguredError extends Error {}

/** Queues one email for the account `userId`; throws when the events queue is not configured or SQS refuses. */
export async function queueEmail(userId: string, message: EmailMessage): Promise<string> {
  const queueUrl = config().eventsQueueUrl;
  if (!queueUrl) throw new EmailQueueNotConfiguredError('EVENTS_QUEUE_URL is not set');
  const mail: QueuedEmail = { kind: 'email', id: `mail_${randomUUID().replaceAll('-', '')}`, userId, message };
  await sendJson(queueUrl, mail);
  return mail.id;
}
