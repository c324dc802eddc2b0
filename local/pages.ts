import type http from 'node:http';
import { completeLocalCheckout, describeLocalCheckout, keepLocalCheckoutsIn, LOCAL_CHECKOUT_PAGE, LOCAL_PORTAL_PAGE } from '#adapters/card-local';
import { getLocalSubscription, peekLocalCheckout, saveLocalCheckout, saveLocalSubscription, takeLocalCheckout } from '#data/local-checkouts';
import { acceptLocalUpload, LOCAL_DOWNLOAD_PATH, LOCAL_UPLOAD_PATH, serveLocalDownload } from '#adapters/file-storage';
import { cardConfig, emailConfig } from '#platform/config';
import { serveConsole } from './console';
import { ASSET_PREFIX } from '#build/web-console';
import { CONSOLE_ROUTES_PATTERN, LOCAL_MAIL_PAGE } from '#contract/console';
import { mailJson, mailPage } from './mail-page';
import { FILE_URL_UPLOAD_MAX_BYTES } from '#contract/skill-actions/file-manager';

// The local card processor's sessions and subscriptions live in the table; the pages that show and complete them are served here.
keepLocalCheckoutsIn({
  save: saveLocalCheckout,
  peek: peekLocalCheckout,
  take: takeLocalCheckout,
  saveSubscription: saveLocalSubscription,
  subscription: getLocalSubscription,
});

/**
 * Pages the local server answers beside the API: the web console (web/, at `/` and every client
 * route, which is where the emails' verification and reset links, the checkout's return page and
 * the gateway receipt page point), the JSON index at `/api`, the local card processor's
 * checkout page and the local mailbox (mail-page.ts). One table.
 */

export interface PageRequest {
  url: URL;
  params: string[];
  body: URLSearchParams;
  /** This server's own origin, as the request reached it (loopback). */
  origin: string;
  /** The body as received, and the request's content type (the file upload PUT). */
  raw: Buffer;
  contentType?: string;
  /** The client's address: the mail page answers only on this machine. */
  peer?: string;
  /** The request's Accept header: `GET /` answers the JSON index to a client that asks for JSON. */
  accept?: string;
}

export interface PageAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

interface Page {
  method: 'GET' | 'POST' | 'PUT';
  path: RegExp;
  /** Larger bodies than the server's default cap (API Gateway's 6 MB). */
  maxBodyBytes?: number;
  answer(req: PageRequest): Promise<PageAnswer> | PageAnswer;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(status: number, title: string, body: string): PageAnswer {
  return {
    status,
    // The card checkout page takes a click that pays: no other site may frame it (clickjacking).
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "frame-ancestors 'none'",
      'x-frame-options': 'DENY',
    },
    body: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body style="font-family:sans-serif;max-width:40rem;margin:2rem auto">\n<h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`,
  };
}

const json = (status: number, body: unknown): PageAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(body),
});

const index = (): PageAnswer =>
  json(200, {
    name: 'agent hosting platform (local stack)',
    api: '/api',
    openapi: '/api/openapi.json',
    health: '/api/health',
    docs: 'README.md in the repository: the walkthrough from sign-up to a running agent',
    cardMode: cardConfig().mode,
    ...(emailConfig().outboxPage ? { mail: `${LOCAL_MAIL_PAGE}: the mail the stack would have sent, the confirmation link among them` } : {}),
    ...(cardConfig().mode === 'local'
      ? { subscribe: 'GET /api/card/checkout?plan=solo signed in (a browser, or curl -i to read the Location), then open the page it redirects to' }
      : {}),
  });

const describeCheckout = (session: NonNullable<Awaited<ReturnType<typeof describeLocalCheckout>>>) => {
  if (session.mode === 'subscription') return `the ${session.metadata.plan ?? ''} plan (subscription)`;
  const price = session.amountTotal !== undefined ? ` at ${(session.amountTotal / 100).toFixed(2)} ${session.currency?.toUpperCase() ?? ''}` : '';
  return session.metadata.kind === 'gateway-call' ? `one ${session.metadata.plugin} gateway call${price}` : `${session.metadata.kind ?? 'a purchase'}${price}`;
};

const localCardOff = () => html(404, 'Local card mode is off', '<p>Start the local stack with <code>CARD_MODE=local</code> to use this page.</p>');

async function checkoutPage({ params }: PageRequest): Promise<PageAnswer> {
  if (cardConfig().mode !== 'local') return localCardOff();
  const session = await describeLocalCheckout(params[0]!);
  if (!session) return html(404, 'Checkout not found', '<p>This checkout does not exist, has expired or was already completed.</p>');
  const what = describeCheckout(session);
  return html(
    200,
    'Local checkout',
    `<p>Local card mode: no card and no money. Paying completes the checkout for ${escapeHtml(what)} and sends the signed card webhook to this server.</p>
<form method="post"><button type="submit">Pay (local test)</button></form>
<p><a href="${escapeHtml(session.cancelUrl)}">Cancel</a></p>`,
  );
}

async function completeCheckout({ params, origin }: PageRequest): Promise<PageAnswer> {
  if (cardConfig().mode !== 'local') return localCardOff();
  const done = await completeLocalCheckout(params[0]!, `${origin}/api/webhooks/card`);
  if (done.outcome === 'unknown') return html(404, 'Checkout not found', '<p>This checkout does not exist, has expired or was already completed.</p>');
  if (done.outcome === 'webhook-refused')
    return html(502, 'The card webhook was refused', `<p>POST /api/webhooks/card answered ${done.status}: <code>${escapeHtml(done.body)}</code></p>`);
  return { status: 303, headers: { location: done.redirect } };
}

/** Where the processor's hosted portal would be: the local processor has no card, invoices or tax to show. */
function portalPage({ url }: PageRequest): PageAnswer {
  if (cardConfig().mode !== 'local') return localCardOff();
  const back = url.searchParams.get('return');
  const home = back && new URL(back, url).origin === url.origin ? back : '/settings/billing';
  return html(
    200,
    'Local billing portal',
    `<p>Local card mode: there is no card to update and no invoice, since nothing is charged. Plans change on the billing page; deleting the account cancels the subscription.</p>
<p><a href="${escapeHtml(home)}">Back to billing</a></p>`,
  );
}

/** The presigned-URL PUT of file-manager's local storage (S3's presigned URL in AWS). */
async function fileUpload({ url, raw, contentType }: PageRequest): Promise<PageAnswer> {
  const result = await acceptLocalUpload(url.searchParams, contentType, raw);
  return result.status === 200 ? { status: 200 } : json(result.status, { error: result.error, code: result.code });
}

/** The signed download URL of a stored file (S3's presigned GET in AWS). */
async function fileDownload({ url }: PageRequest): Promise<PageAnswer> {
  const result = await serveLocalDownload(url.searchParams);
  if (result.status !== 200) return json(result.status, { error: result.error, code: result.code });
  return {
    status: 200,
    headers: { 'content-type': result.contentType || 'application/octet-stream', 'cache-control': 'private, max-age=300', 'x-content-type-options': 'nosniff' },
    body: result.bytes,
  };
}

const PAGES: Page[] = [
  { method: 'GET', path: /^\/api\/?$/, answer: index },
  { method: 'GET', path: /^\/$/, answer: (req) => (wantsJson(req.accept) ? index() : serveConsole(req.url.pathname)) },
  { method: 'GET', path: new RegExp(`^${LOCAL_CHECKOUT_PAGE}/([A-Za-z0-9_]{1,80})$`), answer: checkoutPage },
  { method: 'POST', path: new RegExp(`^${LOCAL_CHECKOUT_PAGE}/([A-Za-z0-9_]{1,80})$`), answer: completeCheckout },
  { method: 'GET', path: new RegExp(`^${LOCAL_PORTAL_PAGE}$`), answer: portalPage },
  { method: 'PUT', path: new RegExp(`^${LOCAL_UPLOAD_PATH}$`), answer: fileUpload, maxBodyBytes: FILE_URL_UPLOAD_MAX_BYTES },
  { method: 'GET', path: new RegExp(`^${LOCAL_DOWNLOAD_PATH}$`), answer: fileDownload },
  { method: 'GET', path: new RegExp(`^${LOCAL_MAIL_PAGE}$`), answer: (req) => mailPage(req.url, req.peer) },
  { method: 'GET', path: new RegExp(`^${LOCAL_MAIL_PAGE}\\.json$`), answer: (req) => mailJson(req.url, req.peer) },
  // The console's assets and its own client routes; any other path goes to the API routes, whose miss is a 404 JSON.
  { method: 'GET', path: new RegExp(`^${ASSET_PREFIX}|${CONSOLE_ROUTES_PATTERN}`), answer: (req) => serveConsole(req.url.pathname) },
];

/** A client that asks for JSON and not HTML (curl -H 'accept: application/json', fetch from a script). */
const wantsJson = (accept = '') => /application\/json/i.test(accept) && !/text\/html/i.test(accept);

/** The page for this request, or undefined (the API routes take it). */
export function matchPage(
  method: string,
  pathname: string,
): (((req: Omit<PageRequest, 'params'>) => Promise<PageAnswer>) & { maxBodyBytes?: number }) | undefined {
  for (const page of PAGES) {
    const m = page.method === method ? page.path.exec(pathname) : null;
    if (m) return Object.assign(async (req: Omit<PageRequest, 'params'>) => page.answer({ ...req, params: m.slice(1) }), { maxBodyBytes: page.maxBodyBytes });
  }
  return undefined;
}

/** The origin a request reached this server on, for calls back to it (the card webhook). */
export const originOf = (req: http.IncomingMessage) => `http://${req.socket.localAddress?.replace(/^::ffff:/, '')}:${req.socket.localPort}`;
