import * as z from 'zod/mini';
import { EmailRejectedError, sendEmail } from '#adapters/email';
import type { QueuedEmail } from '#adapters/email-queue';
import { claimMailSend, finishMailSend, mailSendStatus, releaseMailClaim } from '#data/queued-mail';
import { logger } from '#http/logger';
import { lazySchema } from '#contract/lazy-schema';

/**
 * The events queue's mailer: sends an email queued by adapters/email-queue.ts. SQS delivers
 * at least once, so each mail id is claimed in its account's partition before the send and marked
 * sent after it: a redelivered message finds it sent and mails nothing. A send that fails releases
 * the claim and throws, so SQS retries it and, after the redrive count, moves it to the dead-letter
 * queue (alarmed, `npm run replay-dlq`); a worker that died mid-send left a claim whose lease runs
 * out, after which a retry sends. An address the mail service refuses is not retried.
 */

/** Longer than one send with its retries (adapters/email-ses.ts). */
const SEND_LEASE_MS = 60_000;
/** How long a sent mail's id is remembered: longer than any SQS retention. */
const CLAIM_TTL_SECONDS = 30 * 24 * 3600;

const nonEmpty = () => z.string().check(z.minLength(1));

export const QueuedEmailSchema = lazySchema(() =>
  z.object({
    kind: z.literal('email'),
    id: nonEmpty(),
    userId: nonEmpty(),
    message: z.object({ to: nonEmpty(), subject: z.string(), text: z.string(), html: z.optional(z.string()) }),
  }),
);

export class MailBeingSentError extends Error {}

type ClaimOutcome = 'claimed' | 'sent' | 'rejected';

async function claim(mail: QueuedEmail): Promise<ClaimOutcome> {
  const now = Date.now();
  if (await claimMailSend(mail.userId, mail.id, now + SEND_LEASE_MS, Math.floor(now / 1000) + CLAIM_TTL_SECONDS, now)) return 'claimed';
  const status = await mailSendStatus(mail.userId, mail.id);
  if (status === 'sent' || status === 'rejected') return status;
  throw new MailBeingSentError(`mail ${mail.id} is being sent by another delivery`);
}

export async function deliverQueuedEmail(body: unknown): Promise<void> {
  const mail = QueuedEmailSchema().parse(body) as QueuedEmail;
  const outcome = await claim(mail);
  if (outcome !== 'claimed') {
    logger().info('queued email already handled', { mailId: mail.id, status: outcome });
    return;
  }
  const mark = (status: 'sent' | 'rejected') => finishMailSend(mail.userId, mail.id, status);
  try {
    await sendEmail(mail.message);
  } catch (err) {
    if (err instanceof EmailRejectedError) {
      logger().warn('queued email refused by the mail service; not retried', { mailId: mail.id, userId: mail.userId, error: err.message });
      await mark('rejected');
      return;
    }
    // If even this fails, the lease running out frees the claim for the retry.
    await releaseMailClaim(mail.userId, mail.id).catch(() => undefined);
    throw err;
  }
  await mark('sent');
}
