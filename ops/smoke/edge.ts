import { lookup as dnsLookup, type LookupAddress, type LookupOneOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import WebSocket from 'ws';

/**
 * The agent's own addresses, reached as a client reaches them. A `*.localhost` name is loopback by
 * definition (browsers and curl resolve it so), but the system resolver need not know that, so such
 * names are answered here; every other name goes to DNS.
 */
type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function lookupLocalhost(hostname: string, options: LookupOneOptions | number, callback: LookupCallback): void {
  const opts = typeof options === 'number' ? { family: options } : options;
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if ((opts as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dnsLookup(hostname, opts as never, callback as never);
}

export interface EdgeAnswer {
  status: number;
  body: unknown;
}

/** One HTTP exchange with the agent's URL. */
export function edgeGet(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<EdgeAnswer> {
  const u = new URL(url);
  const client = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(u, { method: 'GET', headers, lookup: lookupLocalhost as never, signal }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: the text is the answer.
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens the agent's websocket with the gateway token, waits for `ready`, sends one message and
 * resolves with the assistant's answer; an `error` frame, a refused upgrade or a close rejects.
 */
export function websocketExchange(url: string, token: string, content: string, signal: AbortSignal): Promise<{ reply: string; agentId?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['agent-runtime'], { headers: { authorization: `Bearer ${token}` }, lookup: lookupLocalhost as never });
    let agentId: string | undefined;
    const done = (err: Error | undefined, reply?: string) => {
      signal.removeEventListener('abort', onAbort);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      if (err) reject(err);
      else resolve({ reply: reply!, agentId });
    };
    const onAbort = () => done(new Error('no answer on the websocket in time'));
    signal.addEventListener('abort', onAbort, { once: true });
    ws.on('message', (data) => {
      let frame: { type?: string; role?: string; content?: unknown; replyTo?: string; agentId?: string; code?: string; error?: string };
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return done(new Error('the websocket sent a frame that is not JSON'));
      }
      if (frame.type === 'ready') {
        agentId = frame.agentId;
        ws.send(JSON.stringify({ type: 'message', content, id: 'smoke-1' }));
      } else if (frame.type === 'error') {
        done(new Error(`the agent answered an error: ${frame.code ?? ''} ${frame.error ?? ''}`.trim()));
      } else if (frame.type === 'message' && frame.role === 'assistant' && frame.replyTo === 'smoke-1') {
        if (typeof frame.content !== 'string' || frame.content.trim() === '') done(new Error('the agent answered an empty message'));
        else done(undefined, frame.content);
      }
    });
    ws.once('unexpected-response', (_req, res) => done(new Error(`the edge refused the upgrade: ${res.statusCode}`)));
    ws.once('close', (code) => done(new Error(`the websocket closed (${code}) before the answer`)));
    ws.once('error', (err) => done(err));
  });
}
