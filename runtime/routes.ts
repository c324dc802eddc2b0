import type http from 'node:http';
import type { AgentCache } from './agents';
import { agentRoutes } from './agent-routes';
import type { GatewayTokenCheck } from './auth';
import type { Answer } from './chat';
import { chatRoute } from './chat-route';
import type { Connections } from './connections';
import { json, readBody } from './http-io';
import type { Log } from './log';
import { PlatformError, type PlatformClient } from './platform';
import type { Enqueue } from './queue';
import type { ProcessStats } from './stats';

/**
 * The runtime's HTTP routes.
 *
 * Without the token:
 *   GET  /livez   → 200 {status: 'alive'}: the process answers (the container image's HEALTHCHECK; tells nothing else)
 * Every other request needs the gateway token (see auth.ts):
 *   GET  /health  → 200 {status: 'ok', runtimeVersion, agents, uptimeMs, websockets: {open, lastChangeAt}} once the state is
 *                 loaded, 503 {status: 'starting'} before; `websockets` lets the idle sweeper count a silent connection as activity
 *   GET  /stats   → live figures of the process (ProcessStats + runtimeVersion, agents)
 *   POST /token {token} → rotates the gateway token (see rotateToken)
 *   POST /reload  → reloads agents, configuration, memory, history, skills and credentials from the platform
 *   GET  /agents/<id>/credentials → {agentId, credentials: names}: which credentials the agent holds (never values)
 *   GET  /agents/<id>/skills, POST /agents/<id>/skills/<skill> → the agent's skills; a call to one through the platform
 *   POST /agents/<id>/chat {content, thread?, stream?} → 200 {content, usage} | 502 {error, code}; with `stream: true`
 *                 200 text/event-stream: `delta` {content} per piece, then `done` {content, usage} or `error` {error, code}
 *   POST /agents/<id>/memory {set?, replace?, clearHistory?} → the platform pushes a memory change
 *                 of a loaded agent: `set` merges keys, `replace` swaps the whole memory, `clearHistory`
 *                 drops the conversation replayed into prompts (404 for an agent not loaded: it loads fresh)
 */

export interface RouteDeps {
  gate: GatewayTokenCheck;
  agents: AgentCache;
  platform: PlatformClient;
  answer: Answer;
  enqueue: Enqueue;
  connections: Connections;
  websockets: () => { open: number; lastChangeAt: string | null };
  stats: () => ProcessStats;
  runtimeVersion: string;
  historyLimit: number;
  log: Log;
}

export function requestHandler(deps: RouteDeps): http.RequestListener {
  const route = routing(deps);
  // Node ignores the promise a request listener returns: a failure here (the platform unreachable
  // while an agent is fetched) must become an answer, not an unhandled rejection that ends the process.
  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      deps.log('request failed', { level: 'ERROR', path: req.url?.split('?')[0], error: (err as Error).message });
      if (res.headersSent) return res.destroy();
      if (err instanceof PlatformError) return json(res, 502, { error: err.message, code: err.code });
      return json(res, 500, { error: 'the runtime failed to answer', code: 'RUNTIME_ERROR' });
    });
  };
}

function routing(deps: RouteDeps) {
  const { gate, agents, runtimeVersion } = deps;
  const chatOverHttp = chatRoute(deps);
  const { applyMemoryPush, credentialNames, skillRequest } = agentRoutes(deps);
  const rotateToken = tokenRotation(deps);
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://runtime');
    // The container's health check runs without the token, which only the process itself holds.
    if (req.method === 'GET' && url.pathname === '/livez') return json(res, 200, { status: 'alive' });
    if (!gate.admits(req, url)) return json(res, 401, { error: 'invalid or missing gateway token', code: 'TOKEN_INVALID' });
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /health') {
      const ready = agents.isReady();
      const body = {
        status: ready ? 'ok' : 'starting',
        runtimeVersion,
        agents: agents.count(),
        uptimeMs: Math.round(process.uptime() * 1000),
        websockets: deps.websockets(),
      };
      return json(res, ready ? 200 : 503, body);
    }
    if (route === 'GET /stats')
      return json(res, 200, { status: agents.isReady() ? 'running' : 'starting', runtimeVersion, agents: agents.count(), ...deps.stats() });
    if (route === 'POST /token') return rotateToken(req, res);
    if (route === 'POST /reload') {
      req.resume();
      try {
        await agents.load();
        return json(res, 200, { success: true, agents: agents.count() });
      } catch (err) {
        return json(res, 502, { error: `could not reload from the platform: ${(err as Error).message}`, code: 'PLATFORM_UNREACHABLE' });
      }
    }
    const memoryPush = /^POST \/agents\/([A-Za-z0-9_-]{1,64})\/memory$/.exec(route);
    if (memoryPush) return applyMemoryPush(req, res, memoryPush[1]!);
    const chat = /^POST \/agents\/([A-Za-z0-9_-]{1,64})\/chat$/.exec(route);
    if (chat) return chatOverHttp(req, res, chat[1]!);
    const credentialsRoute = /^GET \/agents\/([A-Za-z0-9_-]{1,64})\/credentials$/.exec(route);
    if (credentialsRoute) return credentialNames(res, credentialsRoute[1]!);
    const skillRoute = /^\/agents\/([A-Za-z0-9_-]{1,64})\/skills(?:\/([a-z0-9-]{1,64}))?$/.exec(url.pathname);
    if (skillRoute) return skillRequest(req, res, skillRoute[1]!, skillRoute[2]);
    return json(res, 404, { error: 'not found', code: 'NOT_FOUND' });
  };
}

/**
 * Token rotation (account recovery, or the owner's request): only a caller holding the current
 * token can set the next one. From then on the old token opens nothing here, the platform gets
 * the new one, and every other open connection (websockets included) is closed, so whoever held
 * the old token is out. Agents, memory and history stay as they are.
 */
function tokenRotation({ gate, platform, connections, log }: RouteDeps) {
  return async function rotateToken(req: http.IncomingMessage, res: http.ServerResponse) {
    let next: unknown;
    try {
      next = JSON.parse(await readBody(req)).token;
    } catch {
      next = undefined;
    }
    if (typeof next !== 'string' || next.length < 32 || next.length > 256)
      return json(res, 400, { error: 'token must be a string of 32 to 256 characters', code: 'BAD_REQUEST' });
    gate.replace(next);
    platform.useToken(next);
    json(res, 200, { success: true });
    connections.destroyAllBut(req.socket);
    log('gateway token rotated');
  };
}
