import http from 'node:http';
import WebSocket from 'ws';

/**
 * Clients of the agent edge for tests. `edgeRequest` connects to 127.0.0.1 and sends the URL's
 * host as Host itself, so a test can also send what no browser would (an absolute-form target).
 */

export interface EdgeAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** One HTTP exchange with `url` (its host name resolved to loopback); `target` overrides the request target (absolute-form tricks). */
export function edgeRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; target?: string } = {},
): Promise<EdgeAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: Number(u.port),
        method: init.method ?? 'GET',
        path: init.target ?? `${u.pathname}${u.search}`,
        headers: { host: u.host, ...init.headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A websocket to `url` through the edge. */
export const edgeWebsocket = (url: string, protocols: string[] = [], headers: Record<string, string> = {}) => new WebSocket(url, protocols, { headers });

/** Waits for `ready`, sends one message, resolves with the frames up to the answer; a refused upgrade rejects with its status. */
export function converseThroughEdge(ws: WebSocket, content: string): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const frames: any[] = [];
    ws.on('message', (d) => {
      const frame = JSON.parse(d.toString());
      frames.push(frame);
      if (frame.type === 'ready') ws.send(JSON.stringify({ type: 'message', content, id: 'q1' }));
      else if (frame.type === 'message' && frame.role === 'assistant') resolve(frames);
    });
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** The status an upgrade is refused with (the edge answers before any websocket exists). */
export function refusedUpgrade(ws: WebSocket): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_q, res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    ws.once('error', (err) => reject(err));
  });
}

/** Resolves with the close code the other side sends. */
export const closeCodeOf = (ws: WebSocket) => new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
