import { KMSClient } from '@aws-sdk/client-kms';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import path from 'node:path';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { loadGroupHandler } from '#local/handlers';
import { startEmulators } from '#local/emulators';
import { createRouter, lambdaContext, toApiGatewayEvent } from '#local/server';
import { issueSessionToken } from '#domain/auth/jwt';
import { reloadConfig } from '#platform/config';
import { createApiKey } from '#data/api-keys';
import { db, resetDbClient, tableName } from '#data/client';
import * as keys from '#data/keys';
import { bundle, ROOT } from './bundle';
import { measureColdFirstAnswer, type ColdCase, type ColdResult } from './cold';
import { requestUnits, type RequestUnits } from './cost';
import type { createFloorHandler, RecordedCommand } from './floor';
import { measureThroughput, THROUGHPUT_CASES, type ThroughputResult } from './throughput';
import type { WakeResult } from './wake';

/**
 * Warm handler CPU: the real middy handlers, in process, against DynamoDB Local. DynamoDB Local is
 * a separate (Java) process, so this process's cpuUsage() over a call approximates the handler's
 * CPU outside I/O; it still includes the SDK's request signing and (de)serialisation, which a
 * Lambda pays too. fauxqs runs in this process but is idle: none of these routes touch SQS.
 * Two diagnostics sit beside it: the main thread's own CPU (without V8's GC helper threads and the
 * libuv pool, where WebCrypto HMAC runs) and the p99 of the calls no garbage collection overlapped.
 */

// Steady state: after 200 calls V8 was still compiling the pipeline on its helper threads, and that work was most of the public route's p99 (bench/profile-warm.ts --threads: the slowest calls gather in the first few thousand).
export const WARMUPS = 1000;
export const ITERATIONS = 2000;

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
  { method: 'GET', path: '/api/agents', credential: 'jwt', why: 'session route (Bearer JWT) with a rate limit, listing the agents' },
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
  /** On-demand request units of the steady state's commands (the last warm-up call's, which the floor replays; bench/cost.ts). */
  dbRequestUnits: RequestUnits;
  /** Median KMS calls per request over the measured calls (0 in steady state, DESIGN.md section 11). */
  kmsCallsPerRequest: number;
  /** The floor: the same DynamoDB commands through the bare document client, measured interleaved with the route. */
  floor: { commands: string[]; cpuP50Ms: number; cpuP99Ms: number; wallP50Ms: number; wallP99Ms: number };
  /** CPU above the floor: route percentile minus floor percentile. */
  overheadP50Ms: number;
  overheadP99Ms: number;
  overheadOk: boolean;
}

/**
 * DESIGN §11's budget for warm handler CPU outside I/O, judged on the CPU a route spends above its
 * floor: the process CPU of a call also counts the DynamoDB client's own work (marshalling,
 * signing, HTTP), which the floor, making the same commands with nothing else, pays as well.
 */
export const OVERHEAD_BUDGET = { p50Ms: 0.3, p99Ms: 1 };

const BENCH_JWT_SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const TABLE = 'bench';

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;

type FloorHandler = ReturnType<typeof createFloorHandler>;

/** Lambda and the floor both run the SDK's per-call work; these are the CPU and wall time of one call. */
async function timed<T>(call: () => Promise<T>) {
  const t0 = process.threadCpuUsage();
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const result = await call();
  const wallMs = performance.now() - w0;
  const d = process.cpuUsage(c0);
  const td = process.threadCpuUsage(t0);
  return { result, startedAt: w0, wallMs, cpuMs: (d.user + d.system) / 1000, mainThreadCpuMs: (td.user + td.system) / 1000 };
}

export async function measureWarm(
  progress: (msg: string) => void,
  options: { throughput: boolean; wake?: boolean } = { throughput: false },
): Promise<{ warm: WarmResult[]; cold: ColdResult[]; throughput?: ThroughputResult[]; wake?: WakeResult }> {
  progress('starting DynamoDB Local + SQS emulator…');
  const emulators = await startEmulators({ tableName: TABLE });
  try {
    const settings = {
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
      AWS_REGION: 'us-east-1',
    };
    reloadConfig(settings);
    resetDbClient();

    // Counting only: every DynamoDB call of the product goes through this one cached client.
    const client = db();
    let roundTrips = 0;
    let commands: RecordedCommand[] = [];
    // Only the warm-ups record inputs: a copy per command inside the measured window is the bench's own CPU and garbage, not the route's.
    let recordInputs = true;
    const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { send: (...args: unknown[]) => Promise<unknown> }).send = (...args: unknown[]) => {
      roundTrips += 1;
      const command = args[0] as { input?: unknown } | undefined;
      // Copied now: the floor replays these inputs, and the SDK's middleware may change them in place.
      commands.push({ name: command?.constructor?.name ?? 'unknown', input: recordInputs ? structuredClone(command?.input) : undefined });
      return send(...args);
    };
    // Every KMS client of the product (key providers, launcher) is a KMSClient; none is expected warm.
    let kmsCalls = 0;
    const kmsSend = KMSClient.prototype.send;
    KMSClient.prototype.send = function (this: KMSClient, ...args: Parameters<KMSClient['send']>) {
      kmsCalls += 1;
      return (kmsSend as (...a: unknown[]) => unknown).apply(this, args);
    } as KMSClient['send'];

    // The floor bundle has the baseline's settings and its own SDK copy, so the counting above never sees it.
    const floorBundle = await bundle('floor', path.join(ROOT, 'bench', 'floor.ts'));
    const floorModule = (await import(pathToFileURL(floorBundle.outfile).href)) as typeof import('./floor');
    const floorFor = (recorded: RecordedCommand[]): FloorHandler =>
      floorModule.createFloorHandler({ endpoint: emulators.dynamoEndpoint, region: 'us-east-1', commands: recorded });
    const floors = new Map<string, { floor: FloorHandler; headers: Record<string, string>; body?: string }>();

    const userId = 'u_bench';
    const email = 'bench@example.com';
    const { token } = await issueSessionToken({ userId, email, role: 'user' });
    // API-key requests are judged by the account as it is now, so the account record must exist (else 401).
    const at = new Date().toISOString();
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.profile(userId), userId, email, name: email, plan: null, credits: 0, emailVerified: true, createdAt: at, updatedAt: at },
      }),
    );
    const { key: apiKey } = await createApiKey(userId, email, 'bench', 10);
    // The memory write is conditioned on its agent existing; without one it measures the 404 path.
    await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.agent(userId, BENCH_AGENT_ID), agentId: BENCH_AGENT_ID, name: 'bench' } }));

    const route = createRouter();
    const results: WarmResult[] = [];
    const coldCases: ColdCase[] = [];
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

      const eventOf = () => toApiGatewayEvent({ method: c.method, path: c.path, headers, body, route: match.route, params: match.params });
      const invoke = Object.assign(
        () => {
          // Building the event is API Gateway's work, so it stays outside the measured window.
          const event = eventOf();
          const context = lambdaContext(match.route.group, event.requestContext.requestId);
          return () => handler(event, context);
        },
        { event: eventOf },
      );
      // Warm the route alone first; the last warm-up call's commands (the steady state) become its floor.
      recordInputs = true;
      for (let n = 0; n < WARMUPS; n++) {
        commands = [];
        await invoke()();
      }
      const recorded = commands;
      coldCases.push({ route: label, credential: c.credential, group: match.route.group, event: invoke.event(), commands: recorded });
      const floor = floorFor(recorded);
      for (let n = 0; n < WARMUPS; n++) await floor();
      floors.set(`${label} ${c.credential}`, { floor, headers, body });

      const cpu: number[] = [];
      const mainCpu: number[] = [];
      const wall: number[] = [];
      const starts: number[] = [];
      const floorCpu: number[] = [];
      const floorWall: number[] = [];
      const gcs: PerformanceEntry[] = [];
      const observer = new PerformanceObserver((list) => gcs.push(...list.getEntries()));
      observer.observe({ entryTypes: ['gc'] });
      const trips: number[] = [];
      const kms: number[] = [];
      const statuses: Record<string, number> = {};
      const measureRoute = async () => {
        const call = invoke();
        const tripsBefore = roundTrips;
        const kmsBefore = kmsCalls;
        commands = [];
        const m = await timed(call);
        const status = String(m.result.statusCode ?? 200);
        statuses[status] = (statuses[status] ?? 0) + 1;
        cpu.push(m.cpuMs);
        mainCpu.push(m.mainThreadCpuMs);
        starts.push(m.startedAt);
        wall.push(m.wallMs);
        trips.push(roundTrips - tripsBefore);
        kms.push(kmsCalls - kmsBefore);
      };
      const measureFloor = async () => {
        const m = await timed(floor);
        floorCpu.push(m.cpuMs);
        floorWall.push(m.wallMs);
      };
      // Interleaved, alternating which goes first, so drift on this shared machine lands on both.
      recordInputs = false;
      for (let n = 0; n < ITERATIONS; n++) {
        if (n % 2) {
          await measureRoute();
          await measureFloor();
        } else {
          await measureFloor();
          await measureRoute();
        }
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
      floorCpu.sort((a, b) => a - b);
      floorWall.sort((a, b) => a - b);
      kms.sort((a, b) => a - b);
      const cpuP50Ms = percentile(cpu, 0.5);
      const cpuP99Ms = percentile(cpu, 0.99);
      const overheadP50Ms = cpuP50Ms - percentile(floorCpu, 0.5);
      const overheadP99Ms = cpuP99Ms - percentile(floorCpu, 0.99);
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
        dbCommands: commands.map((x) => x.name),
        dbRequestUnits: requestUnits(recorded),
        kmsCallsPerRequest: percentile(kms, 0.5),
        floor: {
          commands: recorded.map((x) => x.name),
          cpuP50Ms: r4(percentile(floorCpu, 0.5)),
          cpuP99Ms: r4(percentile(floorCpu, 0.99)),
          wallP50Ms: r4(percentile(floorWall, 0.5)),
          wallP99Ms: r4(percentile(floorWall, 0.99)),
        },
        overheadP50Ms: r4(overheadP50Ms),
        overheadP99Ms: r4(overheadP99Ms),
        overheadOk: overheadP50Ms <= OVERHEAD_BUDGET.p50Ms && overheadP99Ms <= OVERHEAD_BUDGET.p99Ms,
      });
    }
    KMSClient.prototype.send = kmsSend;
    const cold = await measureColdFirstAnswer(
      coldCases,
      { env: settings, dynamoEndpoint: emulators.dynamoEndpoint, floorEntry: floorBundle.outfile },
      progress,
    );
    // Wake-to-first-answer on the same DynamoDB Local, with a provisioning queue of its own.
    const wake = options.wake ? await (await import('./wake')).measureWake(progress, emulators.queueUrls.provisioning) : undefined;
    if (!options.throughput) return { warm: results, cold, wake };
    const throughputCases = THROUGHPUT_CASES.map((t) => {
      const f = floors.get(`${t.method} ${t.path} ${t.credential}`);
      if (!f) throw new Error(`the throughput case ${t.method} ${t.path} (${t.credential}) has no warm case to take its floor from`);
      return { ...t, ...f };
    });
    return { warm: results, cold, throughput: await measureThroughput(throughputCases, progress), wake };
  } finally {
    resetDbClient();
    await emulators.stop();
  }
}
