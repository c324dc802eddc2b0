import type { IncomingHttpHeaders } from 'node:http';

/**
 * The gateway token a request offers, in the forms the runtime accepts (runtime/auth.ts, which the
 * edge may not import): `Authorization: Bearer <token>` (server clients), the websocket subprotocol
 * pair `agent-runtime, bearer.<token>` (browsers cannot set headers on a websocket), or `?token=`.
 */

/** The websocket subprotocol the runtime selects. */
export const RUNTIME_SUBPROTOCOL = 'agent-runtime';
const TOKEN_SUBPROTOCOL_PREFIX = 'bearer.';
const BEARER = /^bearer\s+/i;

const offeredSubprotocols = (headers: IncomingHttpHeaders) =>
  (headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

/** The token the request offers, in the order above; null when it offers none. */
export function presentedToken(headers: IncomingHttpHeaders, url: URL): string | null {
  const header = headers.authorization;
  if (header && BEARER.test(header)) return header.replace(BEARER, '').trim() || null;
  const fromProtocol = offeredSubprotocols(headers).find((p) => p.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  if (fromProtocol) return fromProtocol.slice(TOKEN_SUBPROTOCOL_PREFIX.length) || null;
  return url.searchParams.get('token') || null;
}

/** Whether the client asked for the runtime's subprotocol (then the edge selects it and asks the runtime for it too). */
export const offersRuntimeSubprotocol = (headers: IncomingHttpHeaders) => offeredSubprotocols(headers).includes(RUNTIME_SUBPROTOCOL);

/**
 * The path and query without `token`: what the edge forwards (the token travels to the runtime
 * in the Authorization header instead) and the only form of the target it ever logs.
 */
export function targetWithoutToken(url: URL): string {
  if (!url.searchParams.has('token')) return `${url.pathname}${url.search}`;
  const query = new URLSearchParams(url.search);
  query.delete('token');
  const rest = query.toString();
  return `${url.pathname}${rest ? `?${rest}` : ''}`;
}
