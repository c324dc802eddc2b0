import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';

/**
 * The agent edge's own cost (docs/architecture.md, "The agent edge"): the same requests straight to
 * a runtime stand-in on loopback and through an edge process in front of it, the edge doing all it
 * does on a request (Host parsing, token check against the kept hash, header rewriting, keep-alive
 * forwarding; websockets relayed frame by frame). The stand-in answers at once, so the difference is
 * the edge's. Then 1,000 websockets held through the one edge process: its memory per connection
 * and how many were dropped.
 */

export const EDGE_TARGETS = { httpP50AddedMs: 1, httpP99AddedMs: 5, websocketP50AddedMs: 1 };
const HTTP_RUNS = 3000;
const WS_RUNS = 2000;
const WARMUP = 300;
const HELD = 1000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

export interface EdgeBenchResult {
  httpGet: { runs: number; directP50Ms: number; directP99Ms: number; edgeP50Ms: number; edgeP99Ms: number; addedP50Ms: number; addedP99Ms: number };
  websocketRoundTrip: { runs: number; directP50Ms: number; edgeP50Ms: number; addedP50Ms: number };
  heldWebsockets: { held: number; dropped: number; edgeRssPerConnectionKb: number; edgeHeapPerConnectionKb: number };
  targets: typeof EDGE_TARGETS;
  ok: boolean;
}

/** The stand-in runtime: a small JSON answer to any GET, an echo over the websocket. */
async function startStandIn() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  });
  const wss = new WebSocketServer({ server, handleProtocols: () => 'agent-runtime' });
  wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, wss, port: (server.address() as AddressInfo).port };
}

function timedGets(port: number, host: string, token: string, runs: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  return new Promise((resolve, reject) => {
    const one = (i: number) => {
      if (i === runs) {
        agent.destroy();
        return resolve(samples);
      }
      const t0 = performance.now();
      http
        .get({ host: '127.0.0.1', port, path: '/health', agent, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`GET answered ${res.statusCode}`));
            samples.push(performance.now() - t0);
            one(i + 1);
          });
        })
        .on('error', reject);
    };
    one(0);
  });
}

async function timedRoundTrips(url: string, token: string, runs: number, host?: string): Promise<number[]> {
  const ws = new WebSocket(url, ['agent-runtime', `bearer.${token}`], host ? { headers: { host } } : {});
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      ws.once('message', () => r());
      ws.send(`{"type":"ping","i":${i}}`);
    });
    samples.push(performance.now() - t0);
  }
  ws.close();
  return samples;
}

const ask = <T>(child: ChildProcess, question: string): Promise<T> =>
  new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send({ ask: question });
  });

export async function measureEdge(progress: (msg: string) => void): Promise<EdgeBenchResult> {
  const standIn = await startStandIn();
  const token = 'gw_bench-token';
  const child = fork(path.join(import.meta.dirname, 'edge-process.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: {
      ...process.env,
      LOG_LEVEL: 'SILENT',
      BENCH_EDGE_TARGET: `http://127.0.0.1:${standIn.port}`,
      BENCH_EDGE_TOKEN_HASH: createHash('sha256').update(token).digest('hex'),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { port } = await new Promise<{ port: number }>((r) => child.once('message', (m) => r(m as { port: number })));
    const host = `agent-0000000000000000.agents.localhost:${port}`;
    progress(`edge: ${HTTP_RUNS} GETs straight and through the edge, alternating rounds…`);
    const direct: number[] = [];
    const through: number[] = [];
    await timedGets(standIn.port, `127.0.0.1:${standIn.port}`, token, WARMUP);
    await timedGets(port, host, token, WARMUP);
    for (let round = 0; round < 6; round++) {
      direct.push(...(await timedGets(standIn.port, `127.0.0.1:${standIn.port}`, token, HTTP_RUNS / 6)));
      through.push(...(await timedGets(port, host, token, HTTP_RUNS / 6)));
    }
    progress(`edge: ${WS_RUNS} websocket round trips straight and through the edge…`);
    await timedRoundTrips(`ws://127.0.0.1:${standIn.port}/agents/a`, token, WARMUP);
    await timedRoundTrips(`ws://127.0.0.1:${port}/agents/a`, token, WARMUP, host);
    const wsDirect = await timedRoundTrips(`ws://127.0.0.1:${standIn.port}/agents/a`, token, WS_RUNS);
    const wsThrough = await timedRoundTrips(`ws://127.0.0.1:${port}/agents/a`, token, WS_RUNS, host);

    progress(`edge: holding ${HELD} websockets through one edge process…`);
    const before = await ask<{ rss: number; heapUsed: number }>(child, 'memory');
    const held: WebSocket[] = [];
    let dropped = 0;
    for (let i = 0; i < HELD; i += 50) {
      const batch = Array.from({ length: Math.min(50, HELD - i) }, () => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/agents/a`, ['agent-runtime', `bearer.${token}`], { headers: { host } });
        ws.on('close', () => dropped++);
        ws.on('error', () => undefined);
        held.push(ws);
        return new Promise((r) => ws.once('open', r).once('error', r));
      });
      await Promise.all(batch);
    }
    // Every one still answers after all are open.
    const answers = (ws: WebSocket) =>
      new Promise<void>((resolve) => {
        if (ws.readyState !== WebSocket.OPEN) return resolve();
        ws.once('message', () => resolve());
        ws.send('{}');
      });
    await Promise.all(held.map(answers));
    const after = await ask<{ rss: number; heapUsed: number; websockets: number }>(child, 'memory');
    const open = held.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    for (const ws of held) ws.removeAllListeners('close').terminate();
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const [d, t, wd, wt] = [sorted(direct), sorted(through), sorted(wsDirect), sorted(wsThrough)];
    const result: EdgeBenchResult = {
      httpGet: {
        runs: HTTP_RUNS,
        directP50Ms: round(percentile(d, 0.5)),
        directP99Ms: round(percentile(d, 0.99)),
        edgeP50Ms: round(percentile(t, 0.5)),
        edgeP99Ms: round(percentile(t, 0.99)),
        addedP50Ms: round(percentile(t, 0.5) - percentile(d, 0.5)),
        addedP99Ms: round(percentile(t, 0.99) - percentile(d, 0.99)),
      },
      websocketRoundTrip: {
        runs: WS_RUNS,
        directP50Ms: round(percentile(wd, 0.5)),
        edgeP50Ms: round(percentile(wt, 0.5)),
        addedP50Ms: round(percentile(wt, 0.5) - percentile(wd, 0.5)),
      },
      heldWebsockets: {
        held: Math.min(open, after.websockets),
        dropped: HELD - open + dropped,
        edgeRssPerConnectionKb: round((after.rss - before.rss) / HELD / 1024, 1),
        edgeHeapPerConnectionKb: round((after.heapUsed - before.heapUsed) / HELD / 1024, 1),
      },
      targets: EDGE_TARGETS,
      ok: false,
    };
    result.ok =
      result.httpGet.addedP50Ms <= EDGE_TARGETS.httpP50AddedMs &&
      result.httpGet.addedP99Ms <= EDGE_TARGETS.httpP99AddedMs &&
      result.websocketRoundTrip.addedP50Ms <= EDGE_TARGETS.websocketP50AddedMs &&
      result.heldWebsockets.dropped === 0;
    return result;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    standIn.wss.close();
    standIn.server.closeAllConnections();
    await new Promise((r) => standIn.server.close(r));
  }
}

export const edgeSummary = (e: EdgeBenchResult) =>
  `Agent edge (one edge process in front of a loopback stand-in runtime): HTTP GET added p50 ${e.httpGet.addedP50Ms} ms, p99 ${e.httpGet.addedP99Ms} ms ` +
  `(straight ${e.httpGet.directP50Ms}/${e.httpGet.directP99Ms} ms, through ${e.httpGet.edgeP50Ms}/${e.httpGet.edgeP99Ms} ms; targets <= ${EDGE_TARGETS.httpP50AddedMs}/${EDGE_TARGETS.httpP99AddedMs} ms); ` +
  `websocket round trip added p50 ${e.websocketRoundTrip.addedP50Ms} ms (target <= ${EDGE_TARGETS.websocketP50AddedMs} ms); ` +
  `${e.heldWebsockets.held} websockets held, ${e.heldWebsockets.dropped} dropped, ${e.heldWebsockets.edgeRssPerConnectionKb} KB RSS ` +
  `(${e.heldWebsockets.edgeHeapPerConnectionKb} KB heap) per connection${e.ok ? '' : ' OVER TARGET'}`;
