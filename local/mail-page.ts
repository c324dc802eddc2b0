import { type OutboxEntry, readOutbox } from '#adapters/email';
import { emailConfig } from '#platform/config';
import { LOCAL_MAIL_PAGE } from '#contract/console';

/**
 * The local stack's mailbox, the way a mail catcher shows what an application sent: `GET /_local/mail`
 * lists the outbox's mails newest first with their links clickable (the confirmation and reset links
 * point at the console), and `GET /_local/mail.json` gives the same list to scripts. The bodies carry
 * sign-in secrets (reset links), so only a client on this machine may read them, whatever HOST the
 * stack listens on; and the page exists only where mail goes to the outbox (the local stack itself).
 */

/** Enough for a day of trying things; an old outbox is not read whole on every visit. */
const NEWEST_SHOWN = 100;

export interface MailPageAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ShownMail extends OutboxEntry {
  /** The http(s) links of the body, in order: what a tool opens (the confirmation link). */
  links: string[];
}

/** A URL in a plain-text body; trailing punctuation belongs to the sentence, not to the link. */
const LINK = /https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/g;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const isLoopback = (address: string | undefined) => !!address && /^(127\.|::1$|::ffff:127\.)/.test(address);

const linksOf = (text: string) => [...text.matchAll(LINK)].map((m) => m[0]);

/** The body as HTML: every character escaped, each link an anchor. */
function bodyHtml(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(LINK)) {
    out += escapeHtml(text.slice(last, m.index)) + `<a href="${escapeHtml(m[0])}">${escapeHtml(m[0])}</a>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}

async function newestMails(to: string | undefined): Promise<{ mails: ShownMail[]; total: number }> {
  const all = await readOutbox(to || undefined);
  const newest = all.slice(-NEWEST_SHOWN).reverse();
  return { mails: newest.map((m) => ({ ...m, links: linksOf(m.text) })), total: all.length };
}

// Mail bodies are shown, never run: no script, no frame, nothing loaded from elsewhere.
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const STYLE = `body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}
article{border:1px solid #bbb;border-radius:6px;padding:0 1rem 1rem;margin:1rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:0}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:inherit;background:#f4f4f4;padding:.75rem;border-radius:4px}
a{color:#0645ad}label{font-weight:600}`;

function page(status: number, title: string, body: string): MailPageAnswer {
  return {
    status,
    headers: PAGE_HEADERS,
    body: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>\n<body><main>\n<h1>${escapeHtml(title)}</h1>\n${body}\n</main></body></html>\n`,
  };
}

const json = (status: number, body: unknown): MailPageAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});

function mailHtml(mail: ShownMail, n: number): string {
  return `<article aria-labelledby="mail-${n}">
<h2 id="mail-${n}">${escapeHtml(mail.subject)}</h2>
<dl><dt>To</dt><dd>${escapeHtml(mail.to)}</dd><dt>From</dt><dd>${escapeHtml(mail.from)}</dd><dt>Sent</dt><dd><time datetime="${escapeHtml(mail.createdAt)}">${escapeHtml(mail.createdAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time></dd></dl>
<pre>${bodyHtml(mail.text)}</pre>
</article>`;
}

/** Why the request gets no mailbox, or undefined when it may read one. */
function refusal(peer: string | undefined): { status: number; why: string } | undefined {
  if (!emailConfig().outboxPage)
    return { status: 404, why: 'This server keeps no local mailbox: mail goes through the email service (SES), or this is not the local stack.' };
  if (!isLoopback(peer)) return { status: 403, why: 'The local mailbox holds sign-in links: only a browser on the machine running the stack may open it.' };
  return undefined;
}

export async function mailPage(url: URL, peer: string | undefined): Promise<MailPageAnswer> {
  const refused = refusal(peer);
  if (refused) return page(refused.status, 'No local mailbox here', `<p>${escapeHtml(refused.why)}</p>`);
  const to = url.searchParams.get('to') ?? '';
  const { mails, total } = await newestMails(to);
  const filter = `<form method="get"><label for="to">Only mail to</label> <input id="to" name="to" type="email" value="${escapeHtml(to)}"> <button type="submit">Show</button>${to ? ' <a href="?">Show all</a>' : ''}</form>`;
  const intro = `<p>The local stack sends no email: each message it would send is kept here, newest first. Open a link to act on it (the confirmation link confirms the address). Reload the page to see new mail; <a href="${LOCAL_MAIL_PAGE}.json${to ? `?to=${encodeURIComponent(to)}` : ''}">the same list as JSON</a>. <a href="/">Back to the console</a>.</p>`;
  const shown = total > mails.length ? `<p>The newest ${mails.length} of ${total} messages.</p>` : '';
  const list = mails.length
    ? mails.map(mailHtml).join('\n')
    : `<p>No mail${to ? ` to ${escapeHtml(to)}` : ''} yet. Sign up in the console and the confirmation mail appears here.</p>`;
  return page(200, 'Local mailbox', `${intro}\n${filter}\n${shown}\n${list}`);
}

export async function mailJson(url: URL, peer: string | undefined): Promise<MailPageAnswer> {
  const refused = refusal(peer);
  if (refused) return json(refused.status, { error: refused.why, code: refused.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN' });
  return json(200, await newestMails(url.searchParams.get('to') ?? undefined));
}
