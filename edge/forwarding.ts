import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/**
 * What the edge sends on to an instance and back: hop-by-hop headers (RFC 9110 §7.6.1) belong to
 * one connection and are dropped both ways, with any header the Connection header names; the
 * client's own forwarding claims are replaced by what the edge saw.
 */

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Headers a client may not pass through the edge: where it claims the request came from or went to. */
const CLIENT_CLAIMS = new Set(['host', 'forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-real-ip']);

/** The header names the Connection header lists (lower-case). */
function namedByConnection(headers: IncomingHttpHeaders | OutgoingHttpHeaders): Set<string> {
  const value = headers.connection;
  const text = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '';
  return new Set(
    text
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** `headers` without hop-by-hop ones (and those Connection names). */
export function withoutHopByHop<H extends IncomingHttpHeaders | OutgoingHttpHeaders>(headers: H): H {
  const named = namedByConnection(headers);
  const out = {} as H;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    (out as Record<string, unknown>)[name] = value;
  }
  return out;
}

export interface ForwardedFrom {
  /** The peer address of the connection the edge accepted. */
  clientAddress: string | undefined;
  /** The scheme clients used to reach the edge: https behind the load balancer, http on the laptop. */
  proto: 'http' | 'https';
  /** The gateway token the edge checked, handed on as the runtime accepts it. */
  token: string;
  /** `host:port` of the instance, the only Host the runtime is sent. */
  targetHost: string;
  /**
   * The X-Forwarded-For the load balancer in front wrote (AWS), which already names the client; a
   * client's own claim otherwise never reaches the runtime.
   */
  trustedForwardedFor?: string;
}

/** The request headers the instance gets. */
export function requestHeadersFor(incoming: IncomingHttpHeaders, from: ForwardedFrom): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(withoutHopByHop(incoming))) {
    if (CLIENT_CLAIMS.has(name) || name === 'authorization' || name === 'sec-websocket-protocol') continue;
    out[name] = value;
  }
  const address = from.clientAddress?.replace(/^::ffff:/, '');
  const chain = [from.trustedForwardedFor, address].filter(Boolean).join(', ');
  out.host = from.targetHost;
  if (chain) out['x-forwarded-for'] = chain;
  out['x-forwarded-proto'] = from.proto;
  out.authorization = `Bearer ${from.token}`;
  return out;
}
