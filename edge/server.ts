import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Transform } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { waitForStatus } from '#domain/lifecycle/wait-for-status';
import { wakeAndWait } from '#domain/lifecycle/wake';
import { wakeConfig } from '#platform/config';
import { logger } from '#platform/logger';
import { requestHeadersFor, withoutHopByHop } from './forwarding';
import { routeCache, routeFromRecords, tokenMatches, type Route, type RouteLoader } from './routes';
import { offersRuntimeSubprotocol, presentedToken, RUNTIME_SUBPROTOCOL, targetWithoutToken } from './tokens';

/**
 * The agent edge: one process that takes HTTP, server-sent events and websocket upgrades for
 * `<subdomain>.<agentDomain>` and forwards them to that account's instance, at the address its
 * launcher registered and nowhere else (docs/architecture.md, "The agent edge").
 *
 * HTTP and SSE go through http-proxy-3 (streamed both ways, so a slow reader holds the instance's
 * writes back through TCP). Websockets end at the edge and are relayed frame by frame with `ws`, one
 * connection to the client and one to the instance: that is what lets the edge cap frame sizes, pause
 * the side that writes faster than the other reads, close idle pairs and, on shutdown, send every
 * client 1012 (service restart) so it reconnects.
 */

export const EDGE_LIMITS = {
  /** How long a route read from the records is kept: a relaunch at a new address is routed within twice this. */
  routeTtlMs: 1000,
  /** Largest request body forwarded (413 above). */
  maxBodyBytes: 10 * 1024 * 1024,
  /** Largest websocket message either way: the runtime's own cap (runtime/websocket.ts). */
  maxFrameBytes: 256 * 1024,
  /** A websocket pair with no message either way for this long is closed (1001). */
  websocketIdleMs: 15 * 60_000,
  /** Pings keep load balancers from timing a quiet socket out and find clients that vanished. */
  pingIntervalMs: 30_000,
  /** Bytes queued towards one side before the other side's reads pause. */
  websocketHighWaterBytes: 1024 * 1024,
  /** An HTTP exchange whose instance sends nothing for this long is ended (an SSE stream sends keep-alives sooner). */
  upstreamIdleMs: 120_000,
  /** Time to send the request head. */
  headersTimeoutMs: 10_000,
  /** Above the load balancer's own idle timeout (60 s), so the edge is never the side that drops a reused connection. */
  keepAliveTimeoutMs: 65_000,
  /** How long a graceful shutdown waits for HTTP exchanges and websocket closes. */
  drainMs: 10_000,
};

export type EdgeLimits = typeof EDGE_LIMITS;

export interface EdgeOptions {
  agentDomain: string;
  /** How long a request to an idle-stopped (or starting) instance is held for it; WAKE_WAIT_SECONDS as it is at each request when absent. */
  wakeWaitMs?: number;
  /**
   * Behind the load balancer (AWS) the scheme clients used is https and the load balancer's
   * X-Forwarded-For names them; on the laptop clients reach the edge directly over http.
   */
  behindLoadBalancer: boolean;
  routes?: RouteLoader;
  limits?: Partial<EdgeLimits>;
}

interface Refusal {
  status: number;
  error: string;
  code: string;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
}

const refused = (status: number, error: string, code: string, more: Pick<Refusal, 'headers' | 'extra'> = {}): Refusal => ({ status, error, code, ...more });
const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'code' in x && 'status' in x;

const json = (refusal: Refusal) => JSON.stringify({ error: refusal.error, code: refusal.code, ...refusal.extra });

/** The one DNS label before `.<agentDomain>` in a Host header; undefined for any other host. */
export function subdomainOf(host: string | undefined, agentDomain: string): string | undefined {
  if (!host) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${agentDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : undefined;
}

/** Whether a Host header names the agent domain at all (the local server hands those to the edge). */
export function isAgentHost(host: string | undefined, agentDomain: string): boolean {
  const name = (host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  return name.endsWith(`.${agentDomain.toLowerCase()}`);
}

/** A close code one side sent, as the edge may pass it to the other (1005/1006/1015 are never sent on the wire). */
function relayableCode(code: number, otherwise: number): number {
  const sendable = (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
  return sendable ? code : otherwise;
}

/** Counts the open connections of each instance against its plan's cap. */
function connectionSlots() {
  const open = new Map<string, number>();
  return {
    take(route: Route): boolean {
      const now = open.get(route.userId) ?? 0;
      if (now >= route.connectionCap) return false;
      open.set(route.userId, now + 1);
      return true;
    },
    release(userId: string): void {
      const now = (open.get(userId) ?? 1) - 1;
      if (now <= 0) open.delete(userId);
      else open.set(userId, now);
    },
    openFor: (userId: string) => open.get(userId) ?? 0,
  };
}

class BodyTooLargeError extends Error {}

/** `req`'s body, failing once it passes `max` bytes (a chunked body declares no length up front). */
function boundedBody(req: IncomingMessage, max: number) {
  let seen = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > max ? new BodyTooLargeError() : null, chunk);
    },
  });
  req.pipe(bounded);
  return bounded;
}

interface EarlyMessage {
  data: RawData;
  isBinary: boolean;
}

interface WebsocketPair {
  client: WebSocket;
  upstream: WebSocket;
  userId: string;
  lastMessageAt: number;
  alive: boolean;
}

export function createEdge(options: EdgeOptions) {
  const limits = { ...EDGE_LIMITS, ...options.limits };
  const routes = routeCache({ load: options.routes ?? routeFromRecords, ttlMs: limits.routeTtlMs });
  const slots = connectionSlots();
  const proto = options.behindLoadBalancer ? 'https' : 'http';
  // One keep-alive pool for every instance (keyed by address): a forwarded request skips the TCP handshake.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: limits.upstreamIdleMs });
  const proxy = createProxyServer({ agent, proxyTimeout: limits.upstreamIdleMs, xfwd: false, ws: false });
  const websockets = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxFrameBytes,
    perMessageDeflate: false,
    handleProtocols: (offered) => (offered.has(RUNTIME_SUBPROTOCOL) ? RUNTIME_SUBPROTOCOL : false),
  });
  const pairs = new Set<WebsocketPair>();
  const inFlight = new Set<ServerResponse>();
  let closing = false;

  proxy.on('proxyRes', (proxyRes) => {
    proxyRes.headers = withoutHopByHop(proxyRes.headers);
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const pair of pairs) {
      if (now - pair.lastMessageAt > limits.websocketIdleMs) {
        pair.client.close(1001, 'idle');
        pair.upstream.close(1001, 'idle');
      } else if (!pair.alive) pair.client.terminate();
      else {
        pair.alive = false;
        pair.client.ping();
      }
    }
  }, limits.pingIntervalMs);
  sweep.unref();

  const wakeWaitMs = () => options.wakeWaitMs ?? wakeConfig().waitMs;
  const log = (message: string, fields: Record<string, unknown>) => logger().info(message, { service: 'agent-edge', ...fields });

  /** The route of an admitted request, or why it is refused. Never forwards anything itself. */
  async function admit(subdomain: string | undefined, req: IncomingMessage, url: URL): Promise<{ route: Route; token: string } | Refusal> {
    if (!subdomain) return refused(404, 'no agent answers at this address', 'AGENT_NOT_FOUND');
    let route = await routes.get(subdomain);
    if (!route) return refused(404, 'no agent answers at this address', 'AGENT_NOT_FOUND');
    const token = presentedToken(req.headers, url);
    if (!token)
      return refused(
        401,
        'a gateway token is required: Authorization: Bearer <token>, the websocket subprotocols agent-runtime and bearer.<token>, or ?token=<token> (GET /api/instance/{userId}/token)',
        'TOKEN_REQUIRED',
        { headers: { 'www-authenticate': 'Bearer' } },
      );
    // Checked before any wake: a request without this account's token never starts its instance.
    if (!tokenMatches(route, token)) return refused(403, "this token does not open this agent: use the account's gateway token", 'TOKEN_INVALID');
    // A relaunch (restart, update, reset-memory) keeps the running process answering until its successor
    // is up: while one is registered, requests go to it; only an instance with nothing running is waited for.
    const answering = (route.status === 'running' || route.status === 'provisioning') && route.endpoint;
    if (!answering) {
      const woken = await runningOrWhy(subdomain, route);
      if (isRefusal(woken)) return woken;
      route = woken;
    }
    return { route, token };
  }

  /** Holds the request while the instance wakes or starts, up to the wake wait; else says what to do. */
  async function runningOrWhy(subdomain: string, route: Route): Promise<Route | Refusal> {
    const { userId } = route;
    const retry = (operationId: string | undefined, code: string, what: string) =>
      refused(503, `the instance is ${what}; retry shortly`, code, {
        headers: { 'retry-after': '5' },
        extra: operationId ? { operationId } : {},
      });
    const reread = async () => {
      routes.invalidate(subdomain);
      return routes.get(subdomain);
    };
    if (route.status === 'stopped' && route.stopReason === 'idle') {
      const outcome = await wakeAndWait(userId, 'edge', wakeWaitMs());
      if (outcome.state === 'waking') return retry(outcome.operationId, 'INSTANCE_WAKING', 'waking up');
      const now = await reread();
      if (now?.status === 'running' && now.endpoint) return now;
      if (!now) return refused(404, 'no agent answers at this address', 'AGENT_NOT_FOUND');
      route = now;
    } else if (route.status === 'provisioning' || route.status === 'running') {
      const waited = await waitForStatus(userId, 'running', wakeWaitMs(), (i) => i.status !== 'provisioning');
      const now = waited.reached ? await reread() : undefined;
      if (now?.status === 'running' && now.endpoint) return now;
      if (!waited.instance || waited.instance.status === 'provisioning' || waited.instance.status === 'running')
        return retry(waited.instance?.operationId ?? route.operationId, 'INSTANCE_STARTING', 'starting');
      route = { ...route, status: waited.instance.status, stopReason: waited.instance.stopReason };
    }
    if (route.status === 'error')
      return refused(409, `the instance failed: repair it with POST /api/instance/${userId}/repair`, 'INSTANCE_FAILED', { extra: { status: 'error' } });
    if (route.stopReason === 'budget')
      return refused(409, "the instance was stopped at the account's spending cap: it starts again once the cap is raised", 'INSTANCE_STOPPED', {
        extra: { status: 'stopped' },
      });
    return refused(409, `the instance is stopped: start it with POST /api/instance/${userId}/start`, 'INSTANCE_STOPPED', { extra: { status: 'stopped' } });
  }

  function reply(res: ServerResponse, refusal: Refusal) {
    if (res.headersSent) return void res.destroy();
    res.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...refusal.headers });
    res.end(json(refusal));
  }

  function refuseUpgrade(socket: Duplex, refusal: Refusal) {
    if (!socket.writable) return void socket.destroy();
    const body = json(refusal);
    const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...refusal.headers };
    const head = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n');
    socket.end(`HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\n${head}\r\n\r\n${body}`);
  }

  /** The request target, refused unless it is a path: an absolute-form URL never chooses where the edge connects. */
  function targetOf(req: IncomingMessage): URL | Refusal {
    const raw = req.url ?? '';
    if (!raw.startsWith('/') || raw.startsWith('//')) return refused(400, 'the request target must be a path', 'BAD_REQUEST_TARGET');
    try {
      return new URL(raw, 'http://edge.invalid');
    } catch {
      return refused(400, 'the request target must be a path', 'BAD_REQUEST_TARGET');
    }
  }

  const unavailable = () => refused(503, 'the edge cannot read its routes right now; retry shortly', 'EDGE_UNAVAILABLE', { headers: { 'retry-after': '1' } });
  const tooLarge = () => refused(413, `request bodies through the edge are at most ${limits.maxBodyBytes} bytes`, 'PAYLOAD_TOO_LARGE');
  const tooMany = (route: Route) =>
    refused(429, `this instance already has ${route.connectionCap} open connections through the edge, its plan's cap`, 'EDGE_CONNECTION_LIMIT', {
      headers: { 'retry-after': '1' },
      extra: { limit: route.connectionCap },
    });

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const subdomain = subdomainOf(req.headers.host, options.agentDomain);
    const url = targetOf(req);
    const logged = { subdomain, method: req.method, target: isRefusal(url) ? '(not a path)' : targetWithoutToken(url) };
    const done = (status: number, more: Record<string, unknown> = {}) =>
      log('edge request', { ...logged, status, ms: Math.round((performance.now() - started) * 10) / 10, ...more });
    const answer = (refusal: Refusal) => {
      reply(res, refusal);
      done(refusal.status, { code: refusal.code });
    };
    if (isRefusal(url)) return answer(url);
    if (closing) return answer(refused(503, 'the edge is restarting; retry shortly', 'EDGE_RESTARTING', { headers: { 'retry-after': '1' } }));
    let admitted: Awaited<ReturnType<typeof admit>>;
    try {
      admitted = await admit(subdomain, req, url);
    } catch (err) {
      logger().warn('edge could not route a request', { ...logged, error: (err as Error).message });
      admitted = unavailable();
    }
    if (isRefusal(admitted)) return answer(admitted);
    const { route, token } = admitted;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limits.maxBodyBytes) return answer(tooLarge());
    if (!slots.take(route)) return answer(tooMany(route));
    inFlight.add(res);
    res.once('close', () => {
      slots.release(route.userId);
      inFlight.delete(res);
      done(res.statusCode);
    });
    const target = new URL(route.endpoint!);
    req.url = targetWithoutToken(url);
    req.headers = requestHeadersFor(req.headers, {
      clientAddress: req.socket.remoteAddress,
      proto,
      token,
      targetHost: target.host,
      trustedForwardedFor: options.behindLoadBalancer ? headerText(req.headers['x-forwarded-for']) : undefined,
    }) as IncomingMessage['headers'];
    const hasBody = declared > 0 || req.headers['transfer-encoding'] !== undefined;
    const body = hasBody ? boundedBody(req, limits.maxBodyBytes) : undefined;
    proxy.web(req, res, { target, ...(body ? { buffer: body } : {}) }, (err) => {
      if (err instanceof BodyTooLargeError || body?.errored instanceof BodyTooLargeError) return reply(res, tooLarge());
      // The registered address refused: the instance moved or stopped, so the next request reads the records again.
      routes.invalidate(subdomain!);
      reply(res, refused(502, 'the instance does not answer; retry shortly', 'INSTANCE_UNREACHABLE', { headers: { 'retry-after': '1' } }));
    });
    body?.once('error', () => {
      if (!res.headersSent) reply(res, tooLarge());
      req.unpipe(body);
      req.resume();
    });
  }

  /** The instance's side of a websocket: resolves once open, or with why it could not be opened. */
  function openUpstream(route: Route, token: string, req: IncomingMessage, url: URL): Promise<{ upstream: WebSocket; early: EarlyMessage[] } | Refusal> {
    const target = new URL(route.endpoint!);
    const address = `${target.protocol === 'https:' ? 'wss' : 'ws'}://${target.host}${targetWithoutToken(url)}`;
    const forwarded = requestHeadersFor({}, {
      clientAddress: req.socket.remoteAddress,
      proto,
      token,
      targetHost: target.host,
      trustedForwardedFor: options.behindLoadBalancer ? headerText(req.headers['x-forwarded-for']) : undefined,
    });
    delete forwarded.host;
    const upstream = new WebSocket(address, offersRuntimeSubprotocol(req.headers) ? [RUNTIME_SUBPROTOCOL] : [], {
      headers: forwarded as Record<string, string>,
      maxPayload: limits.maxFrameBytes,
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    });
    // The runtime greets at once: its first frame can arrive with the handshake's answer, before anyone awaits the open.
    const early: EarlyMessage[] = [];
    upstream.on('message', (data, isBinary) => early.push({ data, isBinary }));
    return new Promise((resolve) => {
      upstream.once('open', () => resolve({ upstream, early }));
      upstream.once('unexpected-response', (_q, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let parsed: { error?: string; code?: string } = {};
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {}
          resolve(refused(res.statusCode ?? 502, parsed.error ?? 'the instance refused the websocket', parsed.code ?? 'UPGRADE_REFUSED'));
        });
        res.on('error', () => resolve(refused(502, 'the instance does not answer', 'INSTANCE_UNREACHABLE')));
      });
      upstream.once('error', () => resolve(refused(502, 'the instance does not answer; retry shortly', 'INSTANCE_UNREACHABLE', { headers: { 'retry-after': '1' } })));
    });
  }

  /** Relays messages both ways; the side written to faster than it reads pauses the other. */
  function relay(client: WebSocket, upstream: WebSocket, early: EarlyMessage[], userId: string) {
    const pair: WebsocketPair = { client, upstream, userId, lastMessageAt: Date.now(), alive: true };
    pairs.add(pair);
    const pipe = (from: WebSocket, to: WebSocket) => (data: RawData, isBinary: boolean) => {
      pair.lastMessageAt = Date.now();
      if (to.readyState !== WebSocket.OPEN) return;
      to.send(data, { binary: isBinary }, () => {
        if (from.isPaused && to.bufferedAmount < limits.websocketHighWaterBytes / 2) from.resume();
      });
      if (to.bufferedAmount > limits.websocketHighWaterBytes) from.pause();
    };
    upstream.removeAllListeners('message');
    for (const m of early) client.send(m.data, { binary: m.isBinary });
    client.on('message', pipe(client, upstream));
    upstream.on('message', pipe(upstream, client));
    client.on('pong', () => {
      pair.alive = true;
    });
    client.once('close', (code, reason) => {
      pairs.delete(pair);
      slots.release(userId);
      if (upstream.readyState === WebSocket.OPEN) upstream.close(relayableCode(code, 1000), reason);
      else upstream.terminate();
    });
    upstream.once('close', (code, reason) => {
      // The instance went away without a close frame: tell the client the gateway lost it (1014).
      if (client.readyState === WebSocket.OPEN) client.close(relayableCode(code, 1014), reason);
    });
    client.on('error', () => client.terminate());
    upstream.on('error', () => upstream.terminate());
  }

  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const started = performance.now();
    const subdomain = subdomainOf(req.headers.host, options.agentDomain);
    const url = targetOf(req);
    const logged = { subdomain, method: 'UPGRADE', target: isRefusal(url) ? '(not a path)' : targetWithoutToken(url) };
    const done = (status: number, more: Record<string, unknown> = {}) =>
      log('edge websocket', { ...logged, status, ms: Math.round((performance.now() - started) * 10) / 10, ...more });
    const refuse = (refusal: Refusal) => {
      refuseUpgrade(socket, refusal);
      done(refusal.status, { code: refusal.code });
    };
    if (isRefusal(url)) return refuse(url);
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuse(refused(400, 'only websocket upgrades are forwarded', 'UPGRADE_UNSUPPORTED'));
    if (closing) return refuse(refused(503, 'the edge is restarting; retry shortly', 'EDGE_RESTARTING', { headers: { 'retry-after': '1' } }));
    let admitted: Awaited<ReturnType<typeof admit>>;
    try {
      admitted = await admit(subdomain, req, url);
    } catch (err) {
      logger().warn('edge could not route a websocket', { ...logged, error: (err as Error).message });
      admitted = unavailable();
    }
    if (isRefusal(admitted)) return refuse(admitted);
    let { route } = admitted;
    if (!slots.take(route)) return refuse(tooMany(route));
    let upstream = await openUpstream(route, admitted.token, req, url);
    if (isRefusal(upstream) && upstream.code === 'INSTANCE_UNREACHABLE') {
      // A stale address (a relaunch moved the instance): read the records again and try the new one once.
      routes.invalidate(subdomain!);
      const again = await admit(subdomain, req, url).catch(() => unavailable());
      if (!isRefusal(again) && again.route.endpoint !== route.endpoint) {
        slots.release(route.userId);
        route = again.route;
        if (!slots.take(route)) return refuse(tooMany(route));
        upstream = await openUpstream(route, again.token, req, url);
      }
    }
    if (isRefusal(upstream)) {
      slots.release(route.userId);
      return refuse(upstream);
    }
    const { upstream: opened, early } = upstream;
    if (closing || !socket.writable) {
      slots.release(route.userId);
      opened.terminate();
      return void socket.destroy();
    }
    websockets.handleUpgrade(req, socket, head, (client) => {
      relay(client, opened, early, route.userId);
      done(101);
    });
  }

  return {
    /** Whether `host` is one of the agents' (the local server hands those requests to the edge). */
    owns: (host: string | undefined) => isAgentHost(host, options.agentDomain),
    handleRequest,
    handleUpgrade,
    /** Open websocket pairs and the connections each instance holds. */
    stats: () => ({ websockets: pairs.size, openFor: slots.openFor, cachedRoutes: routes.size }),
    /**
     * Graceful shutdown: new requests get 503, every websocket client is sent 1012 (service restart)
     * so it reconnects to another edge task or this one restarted, and HTTP exchanges get up to
     * `drainMs` to finish.
     */
    async close(): Promise<void> {
      closing = true;
      clearInterval(sweep);
      const closed = [...pairs].map(
        (pair) =>
          new Promise<void>((resolve) => {
            if (pair.client.readyState === WebSocket.CLOSED) return resolve();
            pair.client.once('close', () => resolve());
            pair.client.close(1012, 'edge restarting');
            pair.upstream.close(1001, 'edge restarting');
          }),
      );
      const drained = new Promise<void>((resolve) => {
        if (!inFlight.size) return resolve();
        const check = setInterval(() => {
          if (inFlight.size) return;
          clearInterval(check);
          resolve();
        }, 50);
        check.unref();
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...closed, drained]), new Promise((r) => (timer = setTimeout(r, limits.drainMs)))]);
      clearTimeout(timer);
      for (const pair of pairs) {
        pair.client.terminate();
        pair.upstream.terminate();
      }
      for (const res of inFlight) res.destroy();
      websockets.close();
      proxy.close();
      agent.destroy();
    },
  };
}

export type Edge = ReturnType<typeof createEdge>;

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

/** The edge's own health answer, for the load balancer's checks, whatever the Host header says. */
export const EDGE_HEALTH_PATH = '/_edge/health';

/**
 * The standalone edge: an HTTP server that answers its health path and hands everything else to
 * the edge. `close()` runs the graceful shutdown, then stops listening.
 */
export function createEdgeServer(options: EdgeOptions) {
  const edge = createEdge(options);
  const limits = { ...EDGE_LIMITS, ...options.limits };
  const server = http.createServer({ headersTimeout: limits.headersTimeoutMs, keepAliveTimeout: limits.keepAliveTimeoutMs, requestTimeout: 0 }, (req, res) => {
    if (req.url === EDGE_HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      return void res.end(req.method === 'HEAD' ? undefined : '{"ok":true}');
    }
    void edge.handleRequest(req, res);
  });
  server.on('upgrade', (req, socket, head) => void edge.handleUpgrade(req, socket, head));
  return {
    server,
    edge,
    async close(): Promise<void> {
      const stopped = new Promise((r) => server.close(r));
      await edge.close();
      server.closeIdleConnections();
      server.closeAllConnections();
      await stopped;
    },
  };
}
