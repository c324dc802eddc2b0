import { randomBytes } from 'node:crypto';
import * as keys from '../keys';
import { outboundCountUpdate } from '../metrics';
import { tenant, transact, tx } from '../tenant';
import { giveBack, reserveWithin, totalOf } from './daily-counter';

/**
 * The email skill's audit trail: one record per message at `EMAILLOG#<ISO time>#<random>` (written
 * before the send, then marked sent or failed), and the day's count at `EMAILDAY#<yyyy-mm-dd>`.
 * The message body is not kept: the record says who, what subject, when and how it went.
 */
interface EmailAuditFields {
  to: string;
  subject: string;
  bytes: number;
  status: 'sending' | 'sent' | 'rejected' | 'failed';
  providerMessageId?: string;
  requestId: string;
  agentId?: string;
  createdAt: string;
}

export interface EmailAudit extends EmailAuditFields, Record<string, unknown> {
  messageId: string;
}

export const reserveEmails = (userId: string, day: string, count: number, limit: number) =>
  reserveWithin(userId, keys.emailDay(userId, day), 'sent', count, limit);
export const giveBackEmails = (userId: string, day: string, count: number) => giveBack(userId, keys.emailDay(userId, day), 'sent', count);
export const emailsSentOn = (userId: string, day: string) => totalOf(userId, keys.emailDay(userId, day), 'sent');

export async function recordEmail(userId: string, audit: EmailAuditFields): Promise<EmailAudit> {
  const messageId = `${audit.createdAt}#${randomBytes(6).toString('hex')}`;
  const record: EmailAudit = { ...audit, messageId };
  await tenant(userId).put({ ...keys.emailAudit(userId, messageId), ...record }, { expression: 'attribute_not_exists(pk)' });
  return record;
}

/** `sending` → how it went, once; a sent email counts as a message sent that month, in the same transaction. */
export async function markEmail(userId: string, messageId: string, status: EmailAudit['status'], providerMessageId?: string, now = new Date()): Promise<void> {
  await transact([
    tx.update(
      keys.emailAudit(userId, messageId),
      {
        expression: 'SET #status = :status, providerMessageId = :provider',
        names: { '#status': 'status' },
        values: { ':status': status, ':provider': providerMessageId ?? null },
      },
      { expression: '#status = :sending', values: { ':sending': 'sending' } },
    ),
    ...(status === 'sent' ? [outboundCountUpdate(userId, now, { emails: 1 })] : []),
  ]);
}

export async function listEmails(userId: string, limit: number): Promise<EmailAudit[]> {
  return (await tenant(userId).query<EmailAudit>(keys.emailAuditPrefix, { limit, newestFirst: true })).items;
}
