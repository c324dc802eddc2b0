import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ConfirmationSource } from './options';

const LINK_TOKEN = /verify-email\?token=([A-Za-z0-9_-]+)/;

/** The token of the newest confirmation link among messages to `email` (any JSON shape that holds the address and the link). */
function newestToken(messages: unknown[], email: string): string | undefined {
  const wanted = email.toLowerCase();
  let token: string | undefined;
  for (const message of messages) {
    const text = JSON.stringify(message);
    if (!text.toLowerCase().includes(wanted)) continue;
    token = LINK_TOKEN.exec(text)?.[1] ?? token;
  }
  return token;
}

const messagesOf = (doc: unknown): unknown[] => {
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === 'object') {
    const list = Object.values(doc).find(Array.isArray);
    if (list) return list;
  }
  return [];
};

/**
 * Reads the token of the confirmation link the platform mailed to `email`. The local sources are
 * polled until the mail is there (mail is written after the sign-up answers); `prompt` asks the
 * operator, who reads the real mailbox.
 */
export async function confirmationToken(source: ConfirmationSource, baseUrl: string, email: string, signal: AbortSignal): Promise<string> {
  if (source.kind === 'prompt') {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await rl.question(`paste the confirmation link sent to ${email}: `, { signal });
      const token = LINK_TOKEN.exec(answer)?.[1] ?? answer.trim();
      if (!token) throw new Error('no link given');
      return token;
    } finally {
      rl.close();
    }
  }
  for (;;) {
    const messages = source.kind === 'outbox' ? readOutbox(source.dir) : await readLocalMail(baseUrl, signal);
    const token = newestToken(messages, email);
    if (token) return token;
    if (signal.aborted) throw new Error(`no confirmation link for ${email} in ${source.kind === 'outbox' ? source.dir : '/_local/mail.json'}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function readOutbox(dir: string): unknown[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new Error(`cannot read the outbox ${dir}: ${(err as Error).message}`);
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as unknown);
}

async function readLocalMail(baseUrl: string, signal: AbortSignal): Promise<unknown[]> {
  const res = await fetch(`${baseUrl}/_local/mail.json`, { signal });
  if (res.status === 404) throw new Error('this platform has no local mail viewer (/_local/mail.json): it is not a local stack, or use --confirm-from prompt');
  if (!res.ok) throw new Error(`/_local/mail.json answered ${res.status}`);
  return messagesOf(await res.json());
}
