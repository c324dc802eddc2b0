import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

/**
 * Who may call the runtime: whoever presents the gateway token, as `Authorization: Bearer <token>`
 * (server clients), as the websocket subprotocol pair `agent-runtime, bearer.<token>` (browsers,
 * which cannot set headers on a websocket), or as `?token=` (works, but ends up in access logs).
 */

/** Websocket subprotocols: the one the server selects, and the prefix of the one carrying the token. */
export const RUNTIME_SUBPROTOCOL = 'agent-runtime';
const TOKEN_SUBPROTOCOL_PREFIX = 'bearer.';

// Comparing digests keeps timingSafeEqual's inputs the same length whatever the caller sends.
const digest = (s: string) => createHash('sha256').update(s).digest();

/** The token a request offers, in the order above; null when it offers none. */
export function presentedToken(req: http.IncomingMessage, url: URL): string | null {
  const header = req.headers.authorization;
  if (header && /^bearer\s+/i.test(header)) return header.replace(/^bearer\s+/i, '').trim();
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const fromProtocol = offered.find((p) => p.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
  if (fromProtocol) return fromProtocol.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
  return url.searchParams.get('token');
}

/** Checks requests against the current gateway token; after `replace` only the new one opens anything. */
export function gatewayTokenCheck(token: string) {
  let expected = digest(token);
  return {
    admits(req: http.IncomingMessage, url: URL): boolean {
      const presented = presentedToken(req, url);
      return !!presented && timingSafeEqual(digest(presented), expected);
    },
    replace(next: string): void {
      expected = digest(next);
    },
  };
}

export type GatewayTokenCheck = ReturnType<typeof gatewayTokenCheck>;
