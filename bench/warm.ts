import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { loadGroupHandler } from '../bin/handlers';
import { startEmulators } from '../bin/local-emulators';
import { createRouter, lambdaContext, toApiGatewayEvent } from '../bin/local-server';
import { generateApiKey, hashApiKey } from '../shared/auth/api-keys';
import { issueSessionToken } from '../shared/auth/jwt';
import { reloadConfig } from '../shared/config';
import { db, resetDbClient, tableName } from '../shared/db/client';
import { keys } from '../shared/db/keys';

/**
 * Warm handler CPU: the real middy handlers, in process, against DynamoDB Local. DynamoDB Local is
 * a separate (Java) process, so this process's cpuUsage() over a call approximates the handler's
 * CPU outside I/O; it still includes the SDK's request signing and (de)serialisation, which a
 * Lambda pays too. fauxqs runs in this process but is idle: none of these routes touch SQS.
 * Two diagnostics sit beside it: the main thread's own CPU (without V8's GC helper threads and the
 * libuv pool, where WebCrypto HMAC runs) and the p99 of the calls no garbage collection overlapped.
 */

export const WARMUPS = 200;
export const ITERATIONS = 2000;
export const CPU_BUDGET = { p50Ms: 0.3, p99Ms: 1 };

type Credential = 'none' | 'jwt' | 'apiKey';

const BENCH_AGENT_ID = 'agent_bench';

interface WarmCase {
  method: string;
  path: string;
  credential: Credential;
  body?: unknown;
  why: string;
}

const CASES: WarmCase[] = [
  { method: 'GET', path: '/api/infra-mcp/info', credential: 'none', why: 'public route (auth none)' },
  { method: 'GET', path: '/api/keys', credential: 'jwt', why: 'session route (Bearer JWT), no rate limit' },
  {
    method: 'POST',
    path: '/api/memory',
    credential: 'jwt',
    body: { agentId: BENCH_AGENT_ID, key: 'notes', memory: { text: 'hello', tags: ['a', 'b'], n: 42 } },
    why: 'session route (Bearer JWT) with a JSON body, writing one key of a seeded agent',
  },
  { method: 'GET', path: '/api/agents/provision', credential: 'jwt', why: 'session route (Bearer JWT) with a rate limit' },
  { method: 'GET', path: '/api/agents/provision', credential: 'apiKey', why: 'session route through an sk_ API key, with a rate limit' },
];

export interface WarmResult {
  route: string;
  credential: Credential;
  why: string;
  /** Status → count over the measured calls; one key when the route answers consistently. */
  statuses: Record<string, number>;
  warmups: number;
  iterations: number;
  cpuP50Ms: number;
  cpuP99Ms: number;
  cpuMeanMs: number;
  mainThreadCpuP50Ms: number;
  mainThreadCpuP99Ms: number;
  gcEvents: number;
  callsOverlappingGc: number;
  cpuP99WithoutGcMs: number;
  wallP50Ms: number;
  wallP99Ms: number;
  /** Median over the measured calls: the steady state. */
  dbRoundTripsPerRequest: number;
  dbRoundTripsMax: number;
  /** Calls that made more round trips than the median (per-container caches refreshing, e.g. the session gate). */
  callsWithExtraRoundTrips: number;
  /** The commands of the last measured call, in order. */
  dbCommands: string[];
  cpuOk: boolean;
}

const BENCH_JWT_SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const TABLE = 'bench';

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;

export async function measureWarm(progress: (msg: string) => void): Promise<WarmResult[]> {
  progress('starting DynamoDB Local + SQS emulator…');
  const emulators = await startEmulators({ tableName: TABLE });
  try {
    reloadConfig({
      STAGE: 'test',
      LOG_LEVEL: 'SILENT',
      TABLE_NAME: TABLE,
      DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
      SQS_ENDPOINT: emulators.sqsEndpoint,
      PROVISIONING_QUEUE_URL: emulators.queueUrls.provisioning,
      EVENTS_QUEUE_URL: emulators.queueUrls.events,
      JWT_SECRET: BENCH_JWT_SECRET,
      APP_URL: 'http://127.0.0.1:3000',
      ADMIN_EMAILS: 'admin@example.com',
      TESTER_EMAILS: 'tester@example.com',
      // Thousands of calls from one user would otherwise measure the 429 path after the first 100.
      RATE_LIMITS: JSON.stringify({ agents: { limit: 1_000_000_000 } }),
    });
    resetDbClient();

    // Counting only: every DynamoDB call of the product goes through this one cached client.
    const client = db();
    let roundTrips = 0;
    let commands: string[] = [];
    const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { send: (...args: unknown[]) => Promise<unknown> }).send = (...args: unknown[]) => {
      roundTrips += 1;
      commands.push((args[0] as object | undefined)?.constructor?.name ?? 'unknown');
      return send(...args);
    };

    const userId = 'u_bench';
    const email = 'bench@example.com';
    const { token } = await issueSessionToken({ userId, email, role: 'user' });
    const apiKey = generateApiKey();
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.apiKeyHash(hashApiKey(apiKey)), userId, email, keyId: 'key_bench' } }));
    // The memory write is conditioned on its agent existing; without one it measures the 404 path.
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.agent(userId, BENCH_AGENT_ID), agentId: BENCH_AGENT_ID, name: 'bench' } }));

    const route = createRouter();
    const results: WarmResult[] = [];
    for (const [i, c] of CASES.entries()) {
      const label = `${c.method} ${c.path}`;
      progress(`warm CPU ${i + 1}/${CASES.length}: ${label} (${c.credential})…`);
      const match = route(c.method, c.path);
      if (!match || match === 'method-not-allowed') throw new Error(`no contract route for ${label}`);
      const handler = await loadGroupHandler(match.route.group);
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'bench' };
      if (c.credential === 'jwt') headers.authorization = `Bearer ${token}`;
      if (c.credential === 'apiKey') headers.authorization = `Bearer ${apiKey}`;
      const body = c.body === undefined ? undefined : JSON.stringify(c.body);

      const cpu: number[] = [];
      const mainCpu: number[] = [];
      const wall: number[] = [];
      const starts: number[] = [];
      const gcs: PerformanceEntry[] = [];
      const observer = new PerformanceObserver((list) => gcs.push(...list.getEntries()));
      observer.observe({ entryTypes: ['gc'] });
      const trips: number[] = [];
      const statuses: Record<string, number> = {};
      for (let n = 0; n < WARMUPS + ITERATIONS; n++) {
        // Building the event is API Gateway's work, so it stays outside the measured window.
        const event = toApiGatewayEvent({ method: c.method, path: c.path, headers, body, route: match.route, params: match.params });
        const context = lambdaContext(match.route.group, event.requestContext.requestId);
        const tripsBefore = roundTrips;
        commands = [];
        const t0 = process.threadCpuUsage();
        const c0 = process.cpuUsage();
        const w0 = performance.now();
        const res = await handler(event, context);
        const w = performance.now() - w0;
        const d = process.cpuUsage(c0);
        const td = process.threadCpuUsage(t0);
        if (n < WARMUPS) continue;
        const status = String(res.statusCode ?? 200);
        statuses[status] = (statuses[status] ?? 0) + 1;
        cpu.push((d.user + d.system) / 1000);
        mainCpu.push((td.user + td.system) / 1000);
        starts.push(w0);
        wall.push(w);
        trips.push(roundTrips - tripsBefore);
      }
      // GC entries are delivered on a later turn of the event loop.
      await new Promise((r) => setTimeout(r, 50));
      observer.disconnect();
      const overlapsGc = starts.map((s0, k) => gcs.some((g) => g.startTime < s0 + wall[k]! && g.startTime + g.duration > s0));
      const cpuWithoutGc = cpu.filter((_, k) => !overlapsGc[k]).sort((a, b) => a - b);
      trips.sort((a, b) => a - b);
      const steadyTrips = percentile(trips, 0.5);
      cpu.sort((a, b) => a - b);
      mainCpu.sort((a, b) => a - b);
      wall.sort((a, b) => a - b);
      const cpuP50Ms = percentile(cpu, 0.5);
      const cpuP99Ms = percentile(cpu, 0.99);
      results.push({
        route: label,
        credential: c.credential,
        why: c.why,
        statuses,
        warmups: WARMUPS,
        iterations: ITERATIONS,
        cpuP50Ms: r4(cpuP50Ms),
        cpuP99Ms: r4(cpuP99Ms),
        cpuMeanMs: r4(cpu.reduce((a, b) => a + b, 0) / cpu.length),
        mainThreadCpuP50Ms: r4(percentile(mainCpu, 0.5)),
        mainThreadCpuP99Ms: r4(percentile(mainCpu, 0.99)),
        gcEvents: gcs.filter((g) => g.startTime >= starts[0]!).length,
        callsOverlappingGc: overlapsGc.filter(Boolean).length,
        cpuP99WithoutGcMs: cpuWithoutGc.length ? r4(percentile(cpuWithoutGc, 0.99)) : -1,
        wallP50Ms: r4(percentile(wall, 0.5)),
        wallP99Ms: r4(percentile(wall, 0.99)),
        dbRoundTripsPerRequest: steadyTrips,
        dbRoundTripsMax: trips[trips.length - 1]!,
        callsWithExtraRoundTrips: trips.filter((t) => t > steadyTrips).length,
        dbCommands: commands,
        cpuOk: cpuP50Ms <= CPU_BUDGET.p50Ms && cpuP99Ms <= CPU_BUDGET.p99Ms,
      });
    }
    return results;
  } finally {
    resetDbClient();
    await emulators.stop();
  }
}
