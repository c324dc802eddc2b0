import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { config, emailConfig } from '#platform/config';
import { logger } from '#platform/logger';

/**
 * Outgoing email. In AWS (STAGE=aws) through SES v2; in the local stack and tests each message is
 * written as one JSON file under the outbox folder (OUTBOX_DIR, default `$DATA_DIR/outbox`), where
 * a developer opens the reset link and tests read it. Either way the log names only the recipient
 * and subject: bodies carry secrets (reset links).
 */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface OutboxEntry extends EmailMessage {
  id: string;
  from: string;
  createdAt: string;
}

/** The email service refused the message itself (a bad address), as opposed to being unavailable. */
export class EmailRejectedError extends Error {}

/**
 * The SES sender is loaded on the first send, not at module init: most requests of the functions that
 * can mail send none, and the SES client is a sizeable part of their bundle plus its evaluation at every
 * cold start. A module of our own, so the lazily loaded part keeps only the client and command.
 */
let loadedSesSender: typeof import('./email-ses') | undefined;
const sesSender = async () => (loadedSesSender ??= await import('./email-ses'));

/** SES in AWS, and outside it when SES_ENDPOINT names one (tests exercise the SES path against a fake). */
const viaSes = () => config().stage === 'aws' || emailConfig().sesEndpoint !== undefined;

/** The last file name's time: two mails in one millisecond still list in the order they were sent. */
let lastStamp = 0;

async function writeToOutbox(message: EmailMessage, from: string): Promise<string> {
  const dir = emailConfig().outboxDir;
  const entry: OutboxEntry = { id: randomUUID(), from, createdAt: new Date().toISOString(), ...message };
  await mkdir(dir, { recursive: true });
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  // Time first so a directory listing reads oldest to newest.
  await writeFile(path.join(dir, `${lastStamp}-${entry.id}.json`), JSON.stringify(entry, null, 2), { mode: 0o600 });
  return entry.id;
}

export async function sendEmail(message: EmailMessage): Promise<string> {
  const from = emailConfig().from;
  const id = viaSes() ? await (await sesSender()).sendWithSes(message, from) : await writeToOutbox(message, from);
  logger().info('email sent', { to: message.to, subject: message.subject, via: viaSes() ? 'ses' : 'outbox', messageId: id });
  return id;
}

/** The local outbox, oldest first, optionally only the messages to one address. */
export async function readOutbox(to?: string): Promise<OutboxEntry[]> {
  const dir = emailConfig().outboxDir;
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const entries = await Promise.all(names.map(async (n) => JSON.parse(await readFile(path.join(dir, n), 'utf8')) as OutboxEntry));
  return to ? entries.filter((e) => e.to.toLowerCase() === to.toLowerCase()) : entries;
}

/** For tests that point the adapter at another region or a mocked client. */
export function resetEmailClient(): void {
  loadedSesSender?.resetSesClient();
}
