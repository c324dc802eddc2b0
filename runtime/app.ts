import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { PlatformError, type AgentState, type ChatMessage, type PlatformClient, type TokenUsage } from './platform';
import { CpuSampler, memoryLimitBytes, taskCount, type ProcessStats } from './stats';

/**
 * The reference agent runtime: one process per account, serving every agent of the account.
 *
 * HTTP, without the token:
 *   GET  /livez   → 200 {status: 'alive'}: the process answers (the container image's HEALTHCHECK; tells nothing else)
 * HTTP (every other request needs the gateway token, `Authorization: Bearer <token>` or `?token=`):
 *   GET  /health  → 200 {status: 'ok', runtimeVersion, agents, uptimeMs, websockets: {open, lastChangeAt}} once the state is
 *                 loaded, 503 {status: 'starting'} before; `websockets` lets the idle sweeper count a silent connection as activity
 *   GET  /stats   → live figures of the process (ProcessStats + runtimeVersion, agents)
 *   POST /reload  → reloads agents, configuration, memory, history, skills and credentials from the platform
 *   GET  /agents/<id>/credentials → {agentId, credentials: names}: which credentials the agent holds (never values)
 *   POST /agents/<id>/chat {content, thread?, stream?} → 200 {content, usage} | 502 {error, code}; with `stream: true`
 *                 200 text/event-stream: `delta` {content} per piece, then `done` {content, usage} or `error` {error, code}
 *   POST /agents/<id>/memory {set?, replace?, clearHistory?} → the platform pushes a memory change
 *                 of a loaded agent: `set` merges keys, `replace` swaps the whole memory, `clearHistory`
 *                 drops the conversation replayed into prompts (404 for an agent not loaded: it loads fresh)
 * Websocket `/agents/<agentId>`, the token as `Authorization: Bearer <token>` (server clients) or
 * as the subprotocol pair `agent-runtime, bearer.<token>` (browsers, which cannot set headers; the
 * server selects `agent-runtime`, never echoing the token); `?token=` still works but ends up in
 * access logs:
 *   server → {type: 'ready', agentId, runtimeVersion} on connect
 *   client → {type: 'message', content, id?, stream?} (or a plain text frame)
 *   server → {type: 'message', role: 'assistant', content, agentId, replyTo?}
 *          | {type: 'error', code, error, agentId?, replyTo?}
 *   With `stream: true` the answer comes in pieces as the model writes it:
 *   server → {type: 'delta', text, agentId, replyTo?} per piece, then
 *            {type: 'done', message: {role: 'assistant', content}, usage?, agentId, replyTo?} (content: the whole answer)
 *          | {type: 'error', code, error, agentId, replyTo?} (also after some deltas, when the model fails mid-stream)
 * Every exchange is stored on the platform before it is answered, so a restart loses nothing.
 */

export interface RuntimeOptions {
  token: string;
  platform: PlatformClient;
  runtimeVersion: string;
  /** Messages of history kept per agent and sent to the model. */
  historyLimit?: number;
  /**
   * The runtime's own log lines (startup, chats handled, failures): JSON on stderr (runtime/server.ts),
   * which the platform keeps as the per-agent log (the local launcher captures it, awslogs in AWS).
   * `agentId` makes a line that agent's; never message content, memory or credentials.
   */
  log?: (message: string, extra?: LogFields) => void;
}

export type LogFields = Record<string, unknown> & { level?: 'INFO' | 'WARN' | 'ERROR'; agentId?: string };

const MAX_MESSAGE_CHARS = 32_000;
const MAX_MEMORY_CHARS = 16_000;

/** Websocket subprotocols: the one the server selects, and the prefix of the one carrying the token. */
export const RUNTIME_SUBPROTOCOL = 'agent-runtime';
const TOKEN_SUBPROTOCOL_PREFIX = 'bearer.';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function createRuntime(opts: RuntimeOptions) {
  const historyLimit = opts.historyLimit ?? 50;
  const log = opts.log ?? (() => undefined);
  let expected = digest(opts.token);
  const agents = new Map<string, AgentState>();
  const queues = new Map<string, Promise<unknown>>();
  const cpu = new CpuSampler();
  const sockets = new Set<Duplex & { bytesRead: number; bytesWritten: number }>();
  const closedBytes = { rx: 0, tx: 0 };
  let ready = false;
  /** When a websocket last opened or closed (ISO): a connection that never sends still keeps its agent awake. */
  let websocketChangedAt: string | null = null;
  const websocketChanged = () => {
    websocketChangedAt = new Date().toISOString();
  };

  const tokenMatches = (presented: string | null | undefined) => !!presented && timingSafeEqual(digest(presented), expected);

  function presentedToken(req: http.IncomingMessage, url: URL): string | null {
    const header = req.headers.authorization;
    if (header && /^bearer\s+/i.test(header)) return header.replace(/^bearer\s+/i, '').trim();
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    const fromProtocol = offered.find((p) => p.startsWith(TOKEN_SUBPROTOCOL_PREFIX));
    if (fromProtocol) return fromProtocol.slice(TOKEN_SUBPROTOCOL_PREFIX.length);
    return url.searchParams.get('token');
  }

  const trimmed = (a: AgentState): AgentState => ({ ...a, messages: a.messages.slice(-historyLimit) });

  async function load(): Promise<void> {
    const state = await opts.platform.state();
    agents.clear();
    for (const a of state.agents) agents.set(a.id, trimmed(a));
    ready = true;
  }

  /** An agent provisioned after this process started is fetched on first use. */
  async function agentFor(agentId: string): Promise<AgentState | undefined> {
    const known = agents.get(agentId);
    if (known) return known;
    const state = await opts.platform.state(agentId);
    const found = state.agents.find((a) => a.id === agentId);
    if (found) agents.set(agentId, trimmed(found));
    return agents.get(agentId);
  }

  function stats(): ProcessStats {
    let rx = closedBytes.rx;
    let tx = closedBytes.tx;
    for (const s of sockets) {
      rx += s.bytesRead;
      tx += s.bytesWritten;
    }
    return {
      cpuPercent: Math.round(cpu.read() * 100) / 100,
      memory: { usedBytes: process.memoryUsage().rss, limitBytes: memoryLimitBytes() },
      uptimeMs: Math.round(process.uptime() * 1000),
      pids: taskCount(),
      network: { rxBytes: rx, txBytes: tx },
    };
  }

  function systemPrompt(agent: AgentState): string {
    const base = agent.config.systemPrompt?.trim() || `You are ${agent.name}, an AI agent hosted on the agent platform. Answer helpfully and concisely.`;
    const skills = (agent.skills ?? []).filter((s) => s.enabled).map((s) => s.skillId);
    const withSkills = skills.length ? `${base}\n\nSkills installed on you: ${skills.join(', ')}.` : base;
    const entries = Object.entries(agent.memory);
    if (!entries.length) return withSkills;
    const memory = entries
      .map(([k, v]) => `- ${k}: ${JSON.stringify(v)}`)
      .join('\n')
      .slice(0, MAX_MEMORY_CHARS);
    return `${withSkills}\n\nWhat you remember (key: value):\n${memory}`;
  }

  async function answer(
    agent: AgentState,
    content: string,
    /** A conversation thread's own messages (a chat session); without it, the agent's whole history. */
    thread?: ChatMessage[],
    /** Given: the completion is streamed and each text piece handed here as it arrives. */
    onDelta?: (text: string) => void,
  ): Promise<{ ok: true; content: string; usage?: TokenUsage } | { ok: false; code: string; error: string }> {
    const history: ChatMessage[] = thread ?? agent.messages.map(({ role, content: c }) => ({ role, content: c }));
    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt(agent) }, ...history, { role: 'user', content }];
    const started = performance.now();
    try {
      const out = onDelta ? await streamedCompletion(agent.id, messages, onDelta) : await opts.platform.complete(agent.id, messages);
      const reply = out.choices[0]?.message.content ?? '';
      const exchange: ChatMessage[] = [
        { role: 'user', content },
        { role: 'assistant', content: reply },
      ];
      await opts.platform
        .report(agent.id, exchange, { responseMs: Math.round(performance.now() - started) })
        .catch((err) => log('could not store an exchange', { level: 'WARN', agentId: agent.id, error: String(err).slice(0, 200) }));
      // A thread's exchange belongs to that thread: the agent-wide context stays as it was.
      if (!thread) agent.messages = [...agent.messages, ...exchange].slice(-historyLimit);
      log('chat handled', { agentId: agent.id, ms: Math.round(performance.now() - started), thread: !!thread, tokens: out.usage?.total_tokens });
      return { ok: true as const, content: reply, usage: out.usage };
    } catch (err) {
      const e = err instanceof PlatformError ? err : new PlatformError('the agent failed to answer', 500, 'RUNTIME_ERROR');
      log('chat failed', { level: 'ERROR', agentId: agent.id, code: e.code, error: e.message.slice(0, 200) });
      await opts.platform.report(agent.id, [{ role: 'user', content }], { failed: true }).catch(() => undefined);
      agent.messages = [...agent.messages, { role: 'user' as const, content }].slice(-historyLimit);
      return { ok: false as const, code: e.code, error: e.message };
    }
  }

  /** A streamed completion read to its end, in the shape of `complete`'s answer; an `error` event fails it. */
  async function streamedCompletion(agentId: string, messages: ChatMessage[], onDelta: (text: string) => void) {
    let content = '';
    for await (const e of opts.platform.completeStream(agentId, messages)) {
      if (e.event === 'delta') {
        content += e.data.content;
        onDelta(e.data.content);
      } else if (e.event === 'error') throw new PlatformError(e.data.error, 502, e.data.code);
      else return { choices: [{ message: { content } }], usage: e.data.usage };
    }
    throw new PlatformError('the completion stream ended without its last event', 502, 'STREAM_BROKEN');
  }

  /** One exchange at a time per agent, so history stays in order. */
  function enqueue<T>(agentId: string, work: () => Promise<T>): Promise<T> {
    const previous = queues.get(agentId) ?? Promise.resolve();
    const next = previous.then(work, work);
    queues.set(
      agentId,
      next.catch(() => undefined),
    );
    return next;
  }

  function parseFrame(data: RawData, isBinary: boolean): { content: string; id?: string; stream?: boolean } | undefined {
    if (isBinary) return undefined;
    const text = data.toString();
    try {
      const json = JSON.parse(text);
      if (json && typeof json === 'object' && json.type === 'message' && typeof json.content === 'string') {
        return { content: json.content, id: typeof json.id === 'string' ? json.id.slice(0, 128) : undefined, stream: json.stream === true };
      }
      if (typeof json === 'string') return { content: json };
      return undefined;
    } catch {
      return { content: text };
    }
  }

  function onConnection(ws: WebSocket, agentId: string) {
    const send = (msg: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    websocketChanged();
    ws.once('close', websocketChanged);
    send({ type: 'ready', agentId, runtimeVersion: opts.runtimeVersion });
    ws.on('message', (data, isBinary) => {
      const frame = parseFrame(data, isBinary);
      if (!frame?.content.trim()) return send({ type: 'error', agentId, code: 'BAD_MESSAGE', error: 'send {"type":"message","content":"..."} or plain text' });
      if (frame.content.length > MAX_MESSAGE_CHARS)
        return send({ type: 'error', agentId, code: 'MESSAGE_TOO_LONG', error: `at most ${MAX_MESSAGE_CHARS} characters`, replyTo: frame.id });
      void enqueue(agentId, async () => {
        const agent = await agentFor(agentId);
        if (!agent) return send({ type: 'error', agentId, code: 'AGENT_NOT_FOUND', error: 'this agent no longer exists', replyTo: frame.id });
        if (frame.stream) {
          const result = await answer(agent, frame.content, undefined, (text) => send({ type: 'delta', agentId, text, replyTo: frame.id }));
          if (result.ok) send({ type: 'done', agentId, message: { role: 'assistant', content: result.content }, usage: result.usage, replyTo: frame.id });
          else send({ type: 'error', agentId, code: result.code, error: result.error, replyTo: frame.id });
          return;
        }
        const result = await answer(agent, frame.content);
        if (result.ok) send({ type: 'message', role: 'assistant', agentId, content: result.content, replyTo: frame.id });
        else send({ type: 'error', agentId, code: result.code, error: result.error, replyTo: frame.id });
      }).catch((err) => {
        log('an exchange failed', { level: 'ERROR', agentId, error: String(err).slice(0, 200) });
        send({ type: 'error', agentId, code: 'RUNTIME_ERROR', error: 'the agent failed to answer', replyTo: frame.id });
      });
    });
  }

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  /**
   * Token rotation (account recovery, or the owner's request): only a caller holding the current
   * token can set the next one. From then on the old token opens nothing here, the platform gets
   * the new one, and every other open connection (websockets included) is closed, so whoever held
   * the old token is out. Agents, memory and history stay as they are.
   */
  async function rotateToken(req: http.IncomingMessage, res: http.ServerResponse) {
    let next: unknown;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      next = JSON.parse(Buffer.concat(chunks).toString('utf8')).token;
    } catch {
      next = undefined;
    }
    if (typeof next !== 'string' || next.length < 32 || next.length > 256)
      return json(res, 400, { error: 'token must be a string of 32 to 256 characters', code: 'BAD_REQUEST' });
    expected = digest(next);
    opts.platform.useToken(next);
    json(res, 200, { success: true });
    for (const s of sockets) if (s !== req.socket) s.destroy();
    log('gateway token rotated');
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://runtime');
    // The container's health check runs without the token, which only the process itself holds.
    if (req.method === 'GET' && url.pathname === '/livez') return json(res, 200, { status: 'alive' });
    if (!tokenMatches(presentedToken(req, url))) return json(res, 401, { error: 'invalid or missing gateway token', code: 'TOKEN_INVALID' });
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /health') {
      const body = {
        status: ready ? 'ok' : 'starting',
        runtimeVersion: opts.runtimeVersion,
        agents: agents.size,
        uptimeMs: Math.round(process.uptime() * 1000),
        websockets: { open: wss.clients.size, lastChangeAt: websocketChangedAt },
      };
      return json(res, ready ? 200 : 503, body);
    }
    if (route === 'GET /stats')
      return json(res, 200, { status: ready ? 'running' : 'starting', runtimeVersion: opts.runtimeVersion, agents: agents.size, ...stats() });
    if (route === 'POST /token') return rotateToken(req, res);
    if (route === 'POST /reload') {
      req.resume();
      try {
        await load();
        return json(res, 200, { success: true, agents: agents.size });
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
  });

  /** GET /agents/<id>/credentials: the names of the credentials this process holds for the agent (never their values). */
  async function credentialNames(res: http.ServerResponse, agentId: string) {
    const agent = await agentFor(agentId).catch(() => undefined);
    if (!agent) return json(res, 404, { error: 'no such agent', code: 'NOT_FOUND' });
    return json(res, 200, { agentId, credentials: Object.keys(agent.credentials ?? {}).sort() });
  }

  /**
   * GET /agents/<id>/skills lists the skills this process loaded for the agent; POST
   * /agents/<id>/skills/<skill> calls one through the platform with the gateway token.
   */
  async function skillRequest(req: http.IncomingMessage, res: http.ServerResponse, agentId: string, skill: string | undefined) {
    const agent = await agentFor(agentId).catch(() => undefined);
    if (!agent) return json(res, 404, { error: 'no such agent', code: 'NOT_FOUND' });
    if (req.method === 'GET' && !skill) return json(res, 200, { agentId, skills: agent.skills ?? [] });
    if (req.method !== 'POST' || !skill) return json(res, 405, { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' });
    let body: unknown;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return json(res, 400, { error: 'the body is not JSON', code: 'INVALID_JSON' });
    }
    try {
      return json(res, 200, await opts.platform.skill(agentId, skill, body as Record<string, unknown>));
    } catch (err) {
      const e = err instanceof PlatformError ? err : new PlatformError('the skill call failed', 500, 'RUNTIME_ERROR');
      return json(res, e.status || 502, { error: e.message, code: e.code });
    }
  }

  /** A memory change the platform stored: applied to the loaded agent at once (see the header). */
  async function applyMemoryPush(req: http.IncomingMessage, res: http.ServerResponse, agentId: string) {
    let change: { set?: unknown; replace?: unknown; clearHistory?: unknown };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      change = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return json(res, 400, { error: 'the body is not JSON', code: 'INVALID_JSON' });
    }
    const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    if ((change.set !== undefined && !isMap(change.set)) || (change.replace !== undefined && !isMap(change.replace)))
      return json(res, 400, { error: 'set and replace must be objects', code: 'BAD_CHANGE' });
    const agent = agents.get(agentId);
    if (!agent) return json(res, 404, { error: 'agent not loaded', code: 'NOT_FOUND' });
    // Object.fromEntries defines own properties, so a key such as `__proto__` stays a plain key.
    const base = change.replace !== undefined ? Object.entries(change.replace) : Object.entries(agent.memory);
    agent.memory = Object.fromEntries([...base, ...Object.entries(change.set ?? {})]);
    if (change.clearHistory === true) agent.messages = [];
    log('memory change applied', { agentId, keys: Object.keys(agent.memory).length, historyCleared: change.clearHistory === true });
    return json(res, 200, { success: true, agentId, keys: Object.keys(agent.memory).length, messages: agent.messages.length });
  }

  /** The platform's `/api/chat` and `/api/agent` chat: one exchange, answered through the platform's model layer. */
  /** A thread the platform sends with a message: plain user/assistant turns, within the history limit; null when malformed. */
  function threadOf(value: unknown): ChatMessage[] | null {
    if (!Array.isArray(value) || value.length > historyLimit) return null;
    const turns: ChatMessage[] = [];
    for (const m of value as { role?: unknown; content?: unknown }[]) {
      if ((m?.role !== 'user' && m?.role !== 'assistant') || typeof m.content !== 'string' || m.content.length > MAX_MESSAGE_CHARS) return null;
      turns.push({ role: m.role, content: m.content });
    }
    return turns;
  }

  async function chatOverHttp(req: http.IncomingMessage, res: http.ServerResponse, agentId: string) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let content: unknown;
    let thread: unknown;
    let stream: unknown;
    try {
      ({ content, thread, stream } = JSON.parse(Buffer.concat(chunks).toString()));
    } catch {
      content = undefined;
    }
    if (typeof content !== 'string' || !content.trim() || content.length > MAX_MESSAGE_CHARS)
      return json(res, 400, { error: 'send {"content": "...", "thread"?: [{role, content}]}', code: 'BAD_MESSAGE' });
    const threadMessages = thread === undefined ? undefined : threadOf(thread);
    if (threadMessages === null)
      return json(res, 400, { error: `thread: at most ${historyLimit} {role: user|assistant, content} messages`, code: 'BAD_THREAD' });
    const agent = await agentFor(agentId);
    if (!agent) return json(res, 404, { error: 'no such agent', code: 'AGENT_NOT_FOUND' });
    if (stream === true) return streamChatOverHttp(res, agent, content, threadMessages);
    const result = await enqueue(agentId, () => answer(agent, content, threadMessages));
    if (result.ok) return json(res, 200, { content: result.content, usage: result.usage });
    return json(res, 502, { error: result.error, code: result.code });
  }

  /**
   * `stream: true`: server-sent events relayed from the platform's streamed completion. The status
   * waits for the first text piece, so a refusal before it (a spending cap, no model) is still a
   * JSON error as without `stream`; after it, a failure ends the stream with an `error` event.
   */
  async function streamChatOverHttp(res: http.ServerResponse, agent: AgentState, content: string, thread: ChatMessage[] | undefined) {
    const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    const result = await enqueue(agent.id, () =>
      answer(agent, content, thread, (text) => {
        if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
        event('delta', { content: text });
      }),
    );
    if (!res.headersSent) {
      if (result.ok) res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      else return json(res, 502, { error: result.error, code: result.code });
    }
    if (result.ok) event('done', { content: result.content, usage: result.usage });
    else event('error', { error: result.error, code: result.code });
    res.end();
  }

  server.on('connection', (socket) => {
    const s = socket as Duplex & { bytesRead: number; bytesWritten: number };
    sockets.add(s);
    socket.once('close', () => {
      sockets.delete(s);
      closedBytes.rx += s.bytesRead;
      closedBytes.tx += s.bytesWritten;
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 256 * 1024,
    // Never echo the token-carrying protocol back; browsers need one offered protocol selected.
    handleProtocols: (offered) => (offered.has(RUNTIME_SUBPROTOCOL) ? RUNTIME_SUBPROTOCOL : false),
  });
  const refuse = (socket: Duplex, status: number, text: string) => {
    socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://runtime');
    if (!tokenMatches(presentedToken(req, url))) return refuse(socket, 401, 'Unauthorized');
    const m = /^\/agents\/([A-Za-z0-9_-]{1,64})\/?$/.exec(url.pathname);
    if (!m) return refuse(socket, 404, 'Not Found');
    const agentId = m[1]!;
    agentFor(agentId).then(
      (agent) => {
        if (!agent) return refuse(socket, 404, 'Not Found');
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, agentId));
      },
      () => refuse(socket, 503, 'Service Unavailable'),
    );
  });

  return {
    server,
    /** Loads the state, retrying while the platform is unreachable; /health says `starting` until then. */
    async start(attempts = 30, pauseMs = 1000): Promise<void> {
      for (let i = 1; ; i += 1) {
        try {
          await load();
          return;
        } catch (err) {
          log('loading the state from the platform failed', { level: 'WARN', attempt: i, error: (err as Error).message });
          if (i >= attempts) throw err;
          await new Promise((r) => setTimeout(r, pauseMs));
        }
      }
    },
    async close(): Promise<void> {
      cpu.stop();
      for (const client of wss.clients) client.close(1001, 'runtime stopping');
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
    isReady: () => ready,
  };
}
