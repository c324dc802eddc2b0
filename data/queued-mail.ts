import * as keys from './keys';
import { ConditionFailedError, tenant } from './tenant';

/**
 * The send state of each queued email (adapters/email-queue.ts), at `USER#<id> / MAILSENT#<mailId>`,
 * so a redelivered queue message mails nothing twice: `sending` under a lease while one delivery
 * sends it, then `sent` or `rejected` (the mail service refused the address).
 */
export type MailSendStatus = 'sending' | 'sent' | 'rejected';

const STATUS = { '#status': 'status' };

/**
 * Claims the mail for one send: true when there was no claim, or only one whose lease ran out
 * (a delivery that died mid-send). `expiresAt` (epoch seconds) is when the record may go.
 */
export async function claimMailSend(userId: string, mailId: string, leaseUntil: number, expiresAt: number, now = Date.now()): Promise<boolean> {
  try {
    await tenant(userId).put(
      { ...keys.queuedEmail(userId, mailId), status: 'sending', leaseUntil, expiresAt },
      {
        expression: 'attribute_not_exists(pk) OR (#status = :sending AND leaseUntil < :now)',
        names: STATUS,
        values: { ':sending': 'sending', ':now': now },
      },
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export const mailSendStatus = async (userId: string, mailId: string) =>
  (await tenant(userId).get<{ status?: MailSendStatus }>(keys.queuedEmail(userId, mailId), true))?.status;

/** The send is over, whichever way: the mail is never sent again. */
export async function finishMailSend(userId: string, mailId: string, status: Exclude<MailSendStatus, 'sending'>): Promise<void> {
  await tenant(userId).update(keys.queuedEmail(userId, mailId), {
    expression: 'SET #status = :status REMOVE leaseUntil',
    names: STATUS,
    values: { ':status': status },
  });
}

/** Gives up a claim whose send failed, so a retry may send at once; a claim no longer `sending` is left as it is. */
export async function releaseMailClaim(userId: string, mailId: string): Promise<void> {
  await tenant(userId).delete(keys.queuedEmail(userId, mailId), { expression: '#status = :sending', names: STATUS, values: { ':sending': 'sending' } });
}
