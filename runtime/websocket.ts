import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { AgentCache } from './agents';
import { RUNTIME_SUBPROTOCOL, type GatewayTokenCheck } from './auth';
import { MAX_MESSAGE_CHARS, type Answer } from './chat';
import type { Log } from './log';
import type { Enqueue } from './queue';

/**
 * Websocket `/agents/<agentId>`, with the gateway token (see auth.ts; with the subprotocol pair the
 * server selects `agent-runtime`, never echoing the token):
 *   server → {type: 'ready', agentId, runtimeVersion} on connect
 *   client → {type: 'message', content, id?, stream?} (or a plain text frame)
 *   server → {type: 'message', role: 'assistant', content, agentId, replyTo?}
 *          | {type: 'error', code, error, agentId?, replyTo?}
 *   With `stream: true` the answer comes in pieces as the model writes it:
 *   server → {type: 'delta', text, agentId, replyTo?} per piece, then
 *            {type: 'done', message: {role: 'assistant', content}, usage?, agentId, replyTo?} (content: the whole answer)
 *          | {type: 'error', code, error, agentId, replyTo?} (also after some deltas, when the model fails mid-stream)
 */

interface WebsocketDeps {
  gate: GatewayTokenCheck;
  agents: AgentCache;
  answer: Answer;
  enqueue: Enqueue;
  runtimeVersion: string;
  log: Log;
}

interface Frame {
  content: string;
  id?: string;
  stream?: boolean;
}

function parseFrame(data: RawData, isBinary: boolean): Frame | undefined {
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

const refuse = (socket: Duplex, status: number, text: string) => {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
};

/** One message of the client, answered in the agent's turn; `send` drops what a closed socket can no longer take. */
function reply({ agents, answer, enqueue, log }: WebsocketDeps, agentId: string, frame: Frame, send: (msg: unknown) => void) {
  void enqueue(agentId, async () => {
    const agent = await agents.agentFor(agentId);
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
}

/** Takes the server's websocket upgrades; `status` feeds `GET /health`, `close` ends every connection. */
export function attachWebsockets(server: http.Server, deps: WebsocketDeps) {
  const { gate, agents, runtimeVersion } = deps;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 256 * 1024,
    // Never echo the token-carrying protocol back; browsers need one offered protocol selected.
    handleProtocols: (offered) => (offered.has(RUNTIME_SUBPROTOCOL) ? RUNTIME_SUBPROTOCOL : false),
  });
  /** When a websocket last opened or closed (ISO): a connection that never sends still keeps its agent awake. */
  let lastChangeAt: string | null = null;
  const changed = () => {
    lastChangeAt = new Date().toISOString();
  };

  function onConnection(ws: WebSocket, agentId: string) {
    const send = (msg: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    changed();
    ws.once('close', changed);
    send({ type: 'ready', agentId, runtimeVersion });
    ws.on('message', (data, isBinary) => {
      const frame = parseFrame(data, isBinary);
      if (!frame?.content.trim()) return send({ type: 'error', agentId, code: 'BAD_MESSAGE', error: 'send {"type":"message","content":"..."} or plain text' });
      if (frame.content.length > MAX_MESSAGE_CHARS)
        return send({ type: 'error', agentId, code: 'MESSAGE_TOO_LONG', error: `at most ${MAX_MESSAGE_CHARS} characters`, replyTo: frame.id });
      reply(deps, agentId, frame, send);
    });
  }

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://runtime');
    if (!gate.admits(req, url)) return refuse(socket, 401, 'Unauthorized');
    const m = /^\/agents\/([A-Za-z0-9_-]{1,64})\/?$/.exec(url.pathname);
    if (!m) return refuse(socket, 404, 'Not Found');
    const agentId = m[1]!;
    agents.agentFor(agentId).then(
      (agent) => {
        if (!agent) return refuse(socket, 404, 'Not Found');
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, agentId));
      },
      () => refuse(socket, 503, 'Service Unavailable'),
    );
  });

  return {
    status: () => ({ open: wss.clients.size, lastChangeAt }),
    close(): void {
      for (const client of wss.clients) client.close(1001, 'runtime stopping');
      wss.close();
    },
  };
}
