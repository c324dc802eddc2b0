import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { loadGroupHandler } from '#local/handlers';
import { startEmulators } from '#local/emulators';
import { createRouter, lambdaContext, toApiGatewayEvent } from '#local/server';
import { issueSessionToken } from '#domain/auth/jwt';
import { reloadConfig } from '#platform/config';
import { createApiKey } from '#data/api-keys';
import { db, resetDbClient, tableName } from '#data/client';
import * as keys from '#data/keys';

/**
 * `npx tsx bench/profile-warm.ts <METHOD> <path> [jwt|apiKey|none] [calls] [--threads]` under `node --cpu-prof`: one warm
 * route called in a loop the way bench/warm.ts calls it, to see where the pipeline's CPU goes.
 * `--threads` (Linux) times each call on its own and says which threads of the process spent the CPU
 * of the slowest 1 % (the p99): the main thread, or the others (V8's GC and compiler helpers, the libuv pool).
 */
const threads = process.argv.includes('--threads');
const [method = 'GET', routePath = '/api/agents', credential = 'jwt', calls = '5000'] = process.argv.slice(2).filter((a) => a !== '--threads');

/**
 * CPU nanoseconds each thread of this process has run, from /proc/self/task/<tid>/schedstat, read
 * through file descriptors kept open into one buffer, so that the probe itself allocates next to nothing
 * (its garbage would otherwise bring on the very collections it is looking for).
 */
const schedstat = new Map<string, number>();
const probeBuffer = Buffer.alloc(64);
function threadCpuNs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) if (!schedstat.has(tid)) schedstat.set(tid, openSync(`/proc/self/task/${tid}/schedstat`, 'r'));
  for (const [tid, fd] of schedstat) {
    let ns = 0;
    try {
      const n = readSync(fd, probeBuffer, 0, probeBuffer.length, 0);
      for (let i = 0; i < n && probeBuffer[i]! >= 48 && probeBuffer[i]! <= 57; i++) ns = ns * 10 + probeBuffer[i]! - 48;
    } catch {
      // The thread has ended.
    }
    out.set(tid, ns);
  }
  return out;
}
const threadName = (tid: string) => {
  try {
    return `${tid}:${readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()}${tid === String(process.pid) ? '(main)' : ''}`;
  } catch {
    return `${tid}:gone`;
  }
};
const emulators = await startEmulators({ tableName: 'profile' });
try {
  reloadConfig({
    STAGE: 'test',
    LOG_LEVEL: 'SILENT',
    TABLE_NAME: 'profile',
    DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
    SQS_ENDPOINT: emulators.sqsEndpoint,
    PROVISIONING_QUEUE_URL: emulators.queueUrls.provisioning,
    EVENTS_QUEUE_URL: emulators.queueUrls.events,
    JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256-0123456789',
    APP_URL: 'http://127.0.0.1:3000',
    RATE_LIMITS: JSON.stringify({ agents: { limit: 1_000_000_000 } }),
    AWS_REGION: 'us-east-1',
  });
  resetDbClient();
  const userId = 'u_profile';
  const email = 'profile@example.com';
  const at = new Date().toISOString();
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.profile(userId), userId, email, name: email, plan: null, credits: 0, emailVerified: true, createdAt: at, updatedAt: at },
    }),
  );
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.agent(userId, 'agent_p'), agentId: 'agent_p', name: 'p' } }));
  const { token } = await issueSessionToken({ userId, email, role: 'user' });
  const { key } = await createApiKey(userId, email, 'profile', 10);
  const match = createRouter()(method, routePath);
  if (!match || match === 'method-not-allowed') throw new Error('no route');
  const handler = await loadGroupHandler(match.route.group);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'bench' };
  if (credential !== 'none') headers.authorization = `Bearer ${credential === 'apiKey' ? key : token}`;
  const body = method === 'POST' ? JSON.stringify({ agentId: 'agent_p', key: 'notes', memory: { text: 'hello', tags: ['a', 'b'], n: 42 } }) : undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const statuses: Record<string, number> = {};
  const perCall: { n: number; cpuMs: number; mainMs: number; byThread: Map<string, number> }[] = [];
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let n = 0; n < Number(calls); n++) {
    const event = toApiGatewayEvent({ method, path: routePath, headers, body, route: match.route, params: match.params });
    const before = threads ? threadCpuNs() : undefined;
    const callCpu0 = process.cpuUsage();
    const main0 = process.threadCpuUsage();
    const result = await handler(event, lambdaContext(match.route.group, event.requestContext.requestId));
    const callCpu = process.cpuUsage(callCpu0);
    const main = process.threadCpuUsage(main0);
    if (before) {
      const after = threadCpuNs();
      const byThread = new Map([...after].map(([tid, ns]) => [tid, (ns - (before.get(tid) ?? 0)) / 1e6]));
      perCall.push({ n, cpuMs: (callCpu.user + callCpu.system) / 1000, mainMs: (main.user + main.system) / 1000, byThread });
    }
    statuses[String(result.statusCode)] = (statuses[String(result.statusCode)] ?? 0) + 1;
  }
  const c = process.cpuUsage(c0);
  if (gc) {
    // Under --expose-gc: what the calls left reachable (a per-request leak makes every collection dearer).
    gc();
    process.stderr.write(`heap retained after the calls: ${((process.memoryUsage().heapUsed - heapBefore) / 1024).toFixed(0)} KB\n`);
  }
  if (threads) {
    perCall.sort((a, b) => a.cpuMs - b.cpuMs);
    const at = (p: number, pick: (x: (typeof perCall)[number]) => number) =>
      pick(perCall[Math.min(perCall.length - 1, Math.ceil(p * perCall.length) - 1)]!).toFixed(3);
    const slowest = perCall.slice(Math.floor(perCall.length * 0.99));
    const mean = (xs: typeof perCall, pick: (x: (typeof perCall)[number]) => number) => (xs.reduce((a, x) => a + pick(x), 0) / xs.length).toFixed(3);
    const totals = new Map<string, number>();
    for (const call of slowest) for (const [tid, ms] of call.byThread) totals.set(tid, (totals.get(tid) ?? 0) + ms);
    process.stderr.write(
      `process cpu p50 ${at(0.5, (x) => x.cpuMs)} p99 ${at(0.99, (x) => x.cpuMs)} ms; the slowest 1 %: process ${mean(slowest, (x) => x.cpuMs)}, main thread ${mean(slowest, (x) => x.mainMs)} ms per call\n` +
        `slowest ${slowest.length} calls, mean ms per call by thread (schedstat, includes the reads around the call):\n` +
        [...totals]
          .sort((a, b) => b[1] - a[1])
          .map(([tid, ms]) => `  ${threadName(tid)} ${(ms / slowest.length).toFixed(3)}`)
          .join('\n') +
        '\n' +
        `when they came (calls per tenth of the run): ${Array.from({ length: 10 }, (_, k) => slowest.filter((x) => Math.floor((x.n * 10) / perCall.length) === k).length).join(' ')}\n`,
    );
  }
  process.stderr.write(
    `${calls} calls, ${((performance.now() - t0) / Number(calls)).toFixed(3)} ms wall/call, ${((c.user + c.system) / 1000 / Number(calls)).toFixed(3)} ms cpu/call, ${JSON.stringify(statuses)}\n`,
  );
} finally {
  resetDbClient();
  await emulators.stop();
}
