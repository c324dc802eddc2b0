import { lookup } from 'node:dns/promises';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { isIP, type LookupFunction } from 'node:net';
import { config, fetchConfig } from '#platform/config';
import { DomainError } from '#platform/errors';
import { isBlockedAddress, isLoopbackAddress } from './url-guard';
import { outsideCallSignal } from '#platform/deadline';

/**
 * The one way the platform fetches a URL a user gave it (the browser and webhook skills). Each
 * hop: only http(s); the URL parsed first (WHATWG parsing turns `2130706433`, `0x7f000001`,
 * `0177.1` and `127.1` into `127.0.0.1`, so the check sees the real address); the name resolved
 * ONCE and every address it has vetted; the connection made to that vetted address (a `lookup`
 * that answers it), so a name that changes its answer between check and connect (DNS rebinding)
 * reaches nothing new. Redirects are followed by hand, each hop checked again, at most
 * `maxRedirects`; the body is read up to `maxBytes`; the whole exchange, all hops, within `timeoutMs`.
 *
 * Tests reach their fakes on loopback through FETCH_ALLOWED_LOOPBACK (exact `127.0.0.1:port`
 * entries), which the configuration refuses in AWS.
 */

export const GUARDED_FETCH_DEFAULTS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 10_000, maxRedirects: 5 } as const;

export interface GuardedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  maxBytes?: number;
  timeoutMs?: number;
  /** 0 answers a redirect as it is (webhook deliveries treat it as a failure). */
  maxRedirects?: number;
  /**
   * Outside AWS, loopback addresses pass too (still resolved once and pinned): account webhook
   * receivers of the local stack and its tests listen there. Ignored in AWS.
   */
  loopbackOutsideAws?: boolean;
  /** Only https URLs (every hop). */
  httpsOnly?: boolean;
}

export interface GuardedResponse {
  status: number;
  /** The URL that answered, after redirects. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body went past `maxBytes` and was cut there. */
  truncated: boolean;
}

/** The URL may not be fetched (scheme, address, redirect count); nothing was sent to it. */
export class UrlNotAllowedError extends DomainError {
  constructor(message: string) {
    super('invalid', message, 'URL_NOT_ALLOWED');
  }
}

/** The site could not be reached or did not answer in time. */
export class FetchFailedError extends DomainError {
  constructor(message: string) {
    super('upstreamFailed', message, 'FETCH_FAILED');
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface Vetted {
  url: URL;
  address: string;
  family: 4 | 6;
}

const portOf = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

/** Parses and vets one hop; resolves the name once. Throws before any connection is made. */
export async function vetUrl(raw: string | URL, opts: Pick<GuardedRequest, 'loopbackOutsideAws' | 'httpsOnly'> = {}): Promise<Vetted> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlNotAllowedError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowedError('only http and https URLs can be fetched');
  if (opts.httpsOnly && url.protocol !== 'https:') throw new UrlNotAllowedError('only https URLs are called');
  if (url.username || url.password) throw new UrlNotAllowedError('URLs with credentials are not fetched');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  if (literal && fetchConfig().allowedLoopback.includes(`${url.hostname}:${portOf(url)}`)) return { url, address: host, family: literal as 4 | 6 };
  let addresses: { address: string; family: number }[];
  if (literal) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new FetchFailedError(`${url.hostname} could not be resolved`);
    }
  }
  const loopbackOk = opts.loopbackOutsideAws === true && config().stage !== 'aws';
  const refused = (address: string) => isBlockedAddress(address) && !(loopbackOk && isLoopbackAddress(address));
  if (!addresses.length || addresses.some((a) => refused(a.address))) throw new UrlNotAllowedError(`${url.hostname} is not a public internet address`);
  const [first] = addresses as [{ address: string; family: number }];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * node:http and node:https through require, on the first call: an ES import of node:http makes Node
 * build its ESM facade, which reads every export, among them the lazy getters (WebSocket and the
 * like) that load undici, a measurable cost on the cold start of every function importing this module
 * (undici showed in the init profile of webhook-delivery); require reads none.
 */
const nodeRequire = createRequire(import.meta.url);
const requestFor = (protocol: string): typeof import('node:http').request =>
  protocol === 'https:' ? (nodeRequire('node:https') as typeof import('node:https')).request : (nodeRequire('node:http') as typeof import('node:http')).request;

/** Answers every resolution of the socket with the vetted address: the connection cannot go elsewhere. */
const pinnedLookup =
  (address: string, family: 4 | 6): LookupFunction =>
  (_host, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };

function send(hop: Vetted, req: GuardedRequest, maxBytes: number, signal: AbortSignal): Promise<{ res: IncomingMessage; body: Buffer; truncated: boolean }> {
  const { url } = hop;
  const request = requestFor(url.protocol);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: portOf(url),
        path: `${url.pathname}${url.search}`,
        method: req.method ?? 'GET',
        headers: { 'user-agent': 'agent-platform-fetch/1', ...req.headers },
        lookup: pinnedLookup(hop.address, hop.family),
        signal,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = maxBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size = maxBytes;
            truncated = true;
            res.destroy();
            resolve({ res, body: Buffer.concat(chunks), truncated });
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks), truncated }));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export async function guardedFetch(raw: string, req: GuardedRequest = {}): Promise<GuardedResponse> {
  const maxBytes = req.maxBytes ?? GUARDED_FETCH_DEFAULTS.maxBytes;
  const timeoutMs = req.timeoutMs ?? GUARDED_FETCH_DEFAULTS.timeoutMs;
  const maxRedirects = req.maxRedirects ?? GUARDED_FETCH_DEFAULTS.maxRedirects;
  const signal = outsideCallSignal(timeoutMs);
  let current: string | URL = raw;
  let hopRequest = req;
  for (let hop = 0; ; hop++) {
    const vetted = await vetUrl(current, req);
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      answer = await send(vetted, hopRequest, maxBytes, signal);
    } catch (err) {
      if (signal.aborted) throw new FetchFailedError(`${vetted.url.host} did not answer within ${timeoutMs} ms`);
      throw new FetchFailedError(`${vetted.url.host} could not be reached: ${(err as Error).message}`);
    }
    const { res, body, truncated } = answer;
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (!REDIRECTS.has(status) || !location || maxRedirects === 0) return { status, url: vetted.url.href, headers: res.headers, body, truncated };
    if (hop >= maxRedirects) throw new UrlNotAllowedError(`more than ${maxRedirects} redirects`);
    try {
      current = new URL(location, vetted.url);
    } catch {
      // A Location no URL parser accepts is the site's answer, not our fault: refused like any hop we will not follow.
      throw new UrlNotAllowedError(`${vetted.url.host} redirected to a Location that is not a valid URL`);
    }
    // As browsers do: 303 (and 301/302 after a POST) continue as a GET without the body.
    if (status === 303 || ((status === 301 || status === 302) && hopRequest.method === 'POST')) hopRequest = { ...hopRequest, method: 'GET', body: undefined };
  }
}
