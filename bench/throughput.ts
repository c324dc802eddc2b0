import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadGroupHandler } from '#local/handlers';
import { createLocalServer } from '#local/server';
import { ROOT } from './bundle';

/**
 * Throughput: autocannon against the local server (every contract route through the real
 * handlers, in this process) and against a bare `node:http` server whose only work is the route's
 * floor (the same DynamoDB commands through the bare document client), both on the same DynamoDB
 * Local. autocannon runs as a child process so the load generator does not share the servers' thread.
 */

export const THROUGHPUT = { connections: 50, durationSeconds: 10, warmupSeconds: 3 };
/** The target: the platform serves at least this share of the bare server's requests/s. */
export const THROUGHPUT_RATIO_TARGET = 0.7;

export const THROUGHPUT_CASES = [
  { method: 'GET', path: '/api/agents', credential: 'jwt' },
  { method: 'POST', path: '/api/memory', credential: 'jwt' },
] as const;

interface ThroughputCase {
  method: string;
  path: string;
  credential: string;
  headers: Record<string, string>;
  body?: string;
  floor: () => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;
}

export interface ServerFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
}

export interface ThroughputResult {
  route: string;
  credential: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  platform: ServerFigures;
  bare: ServerFigures;
  /** platform requests/s over the bare server's. */
  ratio: number;
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

const AUTOCANNON = path.join(ROOT, 'node_modules', 'autocannon', 'autocannon.js');

function autocannon(url: string, c: ThroughputCase, durationSeconds: number): Promise<AutocannonJson> {
  const args = [AUTOCANNON, '--json', '-c', String(THROUGHPUT.connections), '-d', String(durationSeconds), '-m', c.method];
  for (const [k, v] of Object.entries(c.headers)) args.push('-H', `${k}=${v}`);
  if (c.body !== undefined) args.push('-b', c.body);
  args.push(url);
  return new Promise((resolve, reject) => {
    // The parent runs under tsx; its loader must not leak into the load generator.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        if (code !== 0) throw new Error(`autocannon exited ${code}: ${err.trim().slice(0, 1000)}`);
        resolve(JSON.parse(out.trim().split('\n').pop()!) as AutocannonJson);
      } catch (e) {
        reject(e);
      }
    });
  });
}

async function listen(server: http.Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: http.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

async function load(server: http.Server, c: ThroughputCase): Promise<ServerFigures> {
  const base = await listen(server);
  try {
    await autocannon(`${base}${c.path}`, c, THROUGHPUT.warmupSeconds);
    const r = await autocannon(`${base}${c.path}`, c, THROUGHPUT.durationSeconds);
    return {
      requestsPerSecond: r.requests.average,
      latencyP50Ms: r.latency.p50,
      latencyP99Ms: r.latency.p99,
      requests: r.requests.total,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
    };
  } finally {
    server.closeAllConnections();
    await close(server);
  }
}

export async function measureThroughput(cases: ThroughputCase[], progress: (msg: string) => void): Promise<ThroughputResult[]> {
  const results: ThroughputResult[] = [];
  let serverErrors = 0;
  for (const c of cases) {
    const route = `${c.method} ${c.path}`;
    progress(`throughput: ${route} on the platform's local server (${THROUGHPUT.warmupSeconds} s warm-up + ${THROUGHPUT.durationSeconds} s)…`);
    const platform = await load(
      createLocalServer(loadGroupHandler, () => {
        serverErrors += 1;
      }),
      c,
    );
    progress(`throughput: ${route} on the bare node:http server making the same DynamoDB calls…`);
    const bare = await load(
      http.createServer(async (req, res) => {
        for await (const _ of req);
        try {
          const answer = await c.floor();
          res.writeHead(answer.statusCode, answer.headers);
          res.end(answer.body);
        } catch {
          serverErrors += 1;
          res.writeHead(500);
          res.end();
        }
      }),
      c,
    );
    results.push({
      route,
      credential: c.credential,
      connections: THROUGHPUT.connections,
      durationSeconds: THROUGHPUT.durationSeconds,
      warmupSeconds: THROUGHPUT.warmupSeconds,
      platform,
      bare,
      ratio: Math.round((platform.requestsPerSecond / bare.requestsPerSecond) * 100) / 100,
    });
  }
  if (serverErrors) progress(`throughput: ${serverErrors} requests failed inside a server (counted in non2xx)`);
  return results;
}
