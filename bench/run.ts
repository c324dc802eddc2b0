import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contract } from '#contract';
import { addedOverBaseline, bundle, DIST, ROOT, topModules, topPackages, type BundleResult, type ModuleShare } from './bundle';
import { importOnce, INIT_ENV, lazyLoadOnce, median } from './init';
import { handlerPath } from '#contract/functions';

/**
 * `npm run bench`: the performance budgets of docs/architecture.md §11. A report, not a gate: it exits 0
 * even when a budget is exceeded, and marks those rows OVER BUDGET.
 */

const KB = 1024;
// The performance targets (docs/architecture.md §11): init within a ratio of the baseline (a tighter one for the
// DynamoDB-only groups), a median size loaded at init, none over its size budget, no package over the hard limit.
const BUDGET = { dynamoOnlyKb: 350, otherKb: 500, hardKb: 1024, initRatio: 1.3, dynamoOnlyInitRatio: 1.2, medianInitKb: 300 };
const INIT_RUNS = 15;
/** The first rounds also time the load of each function's lazy chunks (one more process per function and round). */
const LAZY_RUNS = 5;
/** Functions that are not behind API Gateway, so not in the contract. */
// provisioner-dlq deploys from the provisioner's bundle (another handler export), so it is not listed twice.
const EVENT_FUNCTIONS = ['provisioner', 'heartbeat', 'task-events', 'webhook-delivery'];

const progress = (msg: string) => process.stderr.write(`${msg}\n`);
const startedAt = performance.now();
const loadAtStart = os.loadavg()[0]!;

interface FunctionRow {
  name: string;
  kind: 'http (dynamo-only)' | 'http' | 'event';
  /** Entry plus its static chunks: what a cold start parses, judged against budgetKb. */
  initBytes: number;
  initKb: number;
  budgetKb: number;
  sizeOk: boolean;
  /** Everything the function deploys (entry and every chunk), judged against the hard limit. */
  packageBytes: number;
  packageKb: number;
  underHardLimit: boolean;
  /** Chunks loaded by an import() on first use, and the median ms to load all of them after the entry. */
  lazyChunks: number;
  lazyLoadMedianMs: number;
  initMedianMs: number;
  initSamplesMs: number[];
  initRatio: number;
  initOk: boolean;
  overBudget: boolean;
  /** The CDK settings fail to bundle this function; the numbers are from a build with `externals` left out. */
  cdkBuildError?: string;
  externals?: string[];
  topModules?: ModuleShare[];
  topPackages?: ModuleShare[];
  addedOverBaseline?: ModuleShare[];
}

const allTargets = [
  ...contract.map((g) => ({
    name: g.group,
    kind: (g.dynamoOnly ? 'http (dynamo-only)' : 'http') as FunctionRow['kind'],
    budgetKb: g.dynamoOnly ? BUDGET.dynamoOnlyKb : BUDGET.otherKb,
  })),
  ...EVENT_FUNCTIONS.map((name) => ({ name, kind: 'event' as const, budgetKb: BUDGET.otherKb })),
];

/**
 * `npm run bench -- --only ai,agent-chat`: the size and init of just those functions (against the
 * same baseline), without the warm CPU and tracing parts; a partial run never updates the reference.
 */
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',').filter(Boolean) : undefined;
const unknown = only?.filter((name) => !allTargets.some((t) => t.name === name)) ?? [];
if (only && (!only.length || unknown.length)) {
  progress(
    `--only needs a comma-separated list of functions; unknown: ${unknown.join(', ') || '(none given)'}; known: ${allTargets.map((t) => t.name).join(', ')}`,
  );
  process.exit(2);
}
/**
 * `npm run bench -- --warm-only`: just the warm CPU part (with `--no-throughput`, about a minute), for a
 * quick loop on the request path; no function is bundled or timed at init, and tracing is left out.
 */
const warmOnly = process.argv.includes('--warm-only');
if ((only || warmOnly) && process.argv.includes('--save-reference')) {
  progress('--save-reference needs the full bench, not --only or --warm-only');
  process.exit(2);
}
if (only && warmOnly) {
  progress('--only and --warm-only measure different parts: give one of them');
  process.exit(2);
}
const targets = only ? allTargets.filter((t) => only.includes(t.name)) : warmOnly ? [] : allTargets;

/**
 * `npm run bench -- --edge-only`: just the agent edge's figures (a minute), written into the
 * reference copy's `edge` entry; every other figure there stays as the last full run left it.
 */
if (process.argv.includes('--edge-only')) {
  const { measureEdge, edgeSummary } = await import('./edge');
  const edge = await measureEdge(progress);
  process.stdout.write(`\n${edgeSummary(edge)}\n`);
  const reference = path.join(ROOT, 'bench', 'results.json');
  const kept = JSON.parse(readFileSync(reference, 'utf8'));
  const measured = { measuredAt: new Date().toISOString(), node: process.version, loadAverage1m: { start: loadAtStart, end: os.loadavg()[0] } };
  writeFileSync(reference, `${JSON.stringify({ ...kept, edge: { ...measured, ...edge } }, null, 2)}\n`);
  progress('wrote the edge entry of bench/results.json');
  process.exit(0);
}

// 1. Bundle, as CDK would.
rmSync(DIST, { recursive: true, force: true });
mkdirSync(DIST, { recursive: true });
progress(`bundling ${targets.length} functions + baseline…`);
const bundles = new Map<string, BundleResult>();
const baseline = await bundle('baseline', path.join(ROOT, 'bench', 'baseline.ts'));
for (const t of targets) bundles.set(t.name, await bundle(t.name, path.join(ROOT, handlerPath(t.name))));
for (const b of [baseline, ...bundles.values()]) writeFileSync(path.join(DIST, b.name, 'meta.json'), JSON.stringify(b.metafile));

// 2. Module init. Round-robin over all bundles, one process at a time (two cores), so drift on
// the machine spreads over every bundle instead of landing on whichever was measured last.
// Round 0 warms the page cache and is discarded.
const files = [baseline, ...bundles.values()];
const samples = new Map<string, number[]>(files.map((b) => [b.name, []]));
const lazySamples = new Map<string, number[]>(files.map((b) => [b.name, []]));
for (let round = 0; round <= INIT_RUNS; round++) {
  progress(round === 0 ? `measuring init: warm-up round (${files.length} bundles)…` : `measuring init: round ${round}/${INIT_RUNS} (${files.length} bundles)…`);
  for (const b of files) {
    const ms = importOnce(b.outfile);
    if (round > 0) samples.get(b.name)!.push(ms);
    if (round > 0 && round <= LAZY_RUNS && b.lazyChunks.length) lazySamples.get(b.name)!.push(lazyLoadOnce(b.outfile, b.lazyChunks));
  }
}
const baselineMedian = median(samples.get('baseline')!);

const rows: FunctionRow[] = targets.map((t) => {
  const b = bundles.get(t.name)!;
  const initMedianMs = median(samples.get(t.name)!);
  const initRatio = initMedianMs / baselineMedian;
  const sizeOk = b.initBytes <= t.budgetKb * KB;
  const underHardLimit = b.packageBytes <= BUDGET.hardKb * KB;
  const initOk = initRatio <= (t.kind === 'http (dynamo-only)' ? BUDGET.dynamoOnlyInitRatio : BUDGET.initRatio);
  const overBudget = !sizeOk || !underHardLimit || !initOk || !!b.cdkBuildError;
  return {
    name: t.name,
    kind: t.kind,
    initBytes: b.initBytes,
    initKb: round(b.initBytes / KB, 1),
    budgetKb: t.budgetKb,
    sizeOk,
    packageBytes: b.packageBytes,
    packageKb: round(b.packageBytes / KB, 1),
    underHardLimit,
    lazyChunks: b.lazyChunks.length,
    lazyLoadMedianMs: b.lazyChunks.length ? round(median(lazySamples.get(t.name)!), 2) : 0,
    initMedianMs: round(initMedianMs, 2),
    initSamplesMs: samples.get(t.name)!.map((x) => round(x, 2)),
    initRatio: round(initRatio, 2),
    initOk,
    overBudget,
    ...(b.cdkBuildError ? { cdkBuildError: b.cdkBuildError, externals: b.externals } : {}),
    ...(overBudget ? { topModules: topModules(b), topPackages: topPackages(b), addedOverBaseline: addedOverBaseline(b, baseline) } : {}),
  };
});

// 3. Warm handler CPU, with the emulators up only now so Java does not disturb the init numbers.
const { measureWarm, OVERHEAD_BUDGET } = await import('./warm');
// `--no-throughput` leaves out the autocannon runs, which are slow, for a quicker warm-CPU check.
const withThroughput = !process.argv.includes('--no-throughput');
// Wake-to-first-answer starts real runtimes, which is slow: the full bench only, never a partial run.
const measured = only ? { warm: [], cold: [] } : await measureWarm(progress, { throughput: withThroughput, wake: !warmOnly });
const warm = measured.warm;
const throughput = 'throughput' in measured ? measured.throughput : undefined;
const cold = measured.cold;
const wake = 'wake' in measured ? measured.wake : undefined;
// The edge's added latency and held websockets: the full bench only (or --edge-only above).
const { measureEdge, edgeSummary } = await import('./edge');
const edge = only || warmOnly ? undefined : await measureEdge(progress);
const { costPerMillion, PRICES_US_EAST_1 } = await import('./cost');
const { LAMBDA_MEMORY_MB } = await import('#lib/function-sizing');
const { THROUGHPUT_RATIO_TARGET } = await import('./throughput');
const costs = warm.map((w) => ({
  route: w.route,
  credential: w.credential,
  atCpuP50Ms: w.cpuP50Ms,
  dbRequestUnits: w.dbRequestUnits,
  kmsCallsPerRequest: w.kmsCallsPerRequest,
  perMillionUsd: costPerMillion(w.cpuP50Ms, w.dbRequestUnits, w.kmsCallsPerRequest),
}));

// 3b. Tracing: Lambda active tracing (the stack's choice) against the Powertools Tracer's init.
const { measureTracing } = await import('./tracing');
const tracing = only || warmOnly ? undefined : await measureTracing(progress);

// 4. Report.
function round(x: number, digits: number) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function table(headers: string[], body: string[][], rightAlign: boolean[]) {
  const widths = headers.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const fmtBytes = (n: number) => `${round(n / KB, 1)} KB`;
const out: string[] = [];
out.push(
  '',
  `Bundles and module init (init KB: the entry and the chunks it imports statically, what a cold start parses; package KB: every chunk deployed, ` +
    `hard limit ${BUDGET.hardKb} KB; lazy: chunks an import() loads on first use, and the median ms of ${LAZY_RUNS} fresh processes to load them all after the entry; ` +
    `init: median of ${INIT_RUNS} fresh node ${process.version} processes; baseline = DynamoDB document client only)`,
  '',
);
out.push(
  table(
    [
      'function',
      'kind',
      'init bytes',
      'init KB',
      'budget KB',
      'size ok',
      'package KB',
      'lazy chunks',
      'lazy load ms',
      'init median ms',
      'ratio',
      'init ok',
      '',
    ],
    [
      [
        '(baseline)',
        'DynamoDBDocumentClient',
        String(baseline.initBytes),
        (baseline.initBytes / KB).toFixed(1),
        '-',
        '-',
        (baseline.packageBytes / KB).toFixed(1),
        String(baseline.lazyChunks.length),
        baseline.lazyChunks.length ? median(lazySamples.get('baseline')!).toFixed(2) : '-',
        baselineMedian.toFixed(2),
        '1.00',
        '-',
        '',
      ],
      ...rows.map((r) => [
        r.name,
        r.kind,
        String(r.initBytes),
        r.initKb.toFixed(1),
        String(r.budgetKb),
        r.underHardLimit ? (r.sizeOk ? 'yes' : 'NO') : `${r.sizeOk ? 'yes' : 'NO'}, package > ${BUDGET.hardKb} KB`,
        r.packageKb.toFixed(1),
        String(r.lazyChunks),
        r.lazyChunks ? r.lazyLoadMedianMs.toFixed(2) : '-',
        r.initMedianMs.toFixed(2),
        r.initRatio.toFixed(2),
        r.initOk ? 'yes' : 'NO',
        [
          r.sizeOk && r.underHardLimit && r.initOk
            ? ''
            : `OVER BUDGET (${[!r.sizeOk && 'size', !r.underHardLimit && 'package', !r.initOk && 'init'].filter(Boolean).join(' + ')})`,
          r.cdkBuildError ? `CDK BUILD FAILS (measured with ${r.externals!.join(', ')} external)` : '',
        ]
          .filter(Boolean)
          .join('; '),
      ]),
    ],
    [false, false, true, true, true, false, true, true, true, true, true, false, false],
  ),
);

const over = rows.filter((r) => r.overBudget);
for (const r of rows.filter((x) => x.cdkBuildError)) {
  out.push('', `CDK BUILD FAILS for ${r.name}: ${r.cdkBuildError}`);
  out.push(
    `  Its row was measured with ${r.externals!.join(', ')} left external (what CDK's bundling.nodeModules would ship beside the bundle; not counted in bytes).`,
  );
}
if (over.length) {
  out.push('', 'What the over-budget bundles load at init (minified bytes in the entry and its static chunks, from the esbuild metafile):');
  for (const r of over) {
    out.push(
      '',
      `  ${r.name} (${r.initKb.toFixed(1)} KB at init, budget ${r.budgetKb} KB, package ${r.packageKb.toFixed(1)} KB, init ${r.initRatio.toFixed(2)}x) — top modules:`,
    );
    for (const m of r.topModules!) out.push(`    ${fmtBytes(m.bytes).padStart(10)}  ${m.module}`);
    out.push('    by package:');
    for (const m of r.topPackages!) out.push(`    ${fmtBytes(m.bytes).padStart(10)}  ${m.module}`);
    out.push('    added on top of the baseline (document client only), by package:');
    for (const m of r.addedOverBaseline!) out.push(`    ${`+${fmtBytes(m.bytes)}`.padStart(10)}  ${m.module}`);
  }
}

// A partial run (--only) measures neither.
if (!only) reportWarmAndTracing();

function reportWarmAndTracing() {
  out.push(
    '',
    `Warm CPU per call, the DynamoDB client's own work included (${warm[0]?.iterations ?? 0} calls after ${warm[0]?.warmups ?? 0} warm-ups; process.cpuUsage() per call, ` +
      'DynamoDB Local in another process; judged in the next table, above the floor that makes the same calls)',
    '',
  );
  out.push(
    table(
      [
        'route',
        'credential',
        'statuses',
        'cpu p50 ms',
        'cpu p99 ms',
        'cpu mean ms',
        'main-thread p50/p99 ms',
        'p99 w/o GC ms',
        'calls hit by GC',
        'wall p50 ms',
        'wall p99 ms',
        'DynamoDB trips/req',
      ],
      warm.map((w) => [
        w.route,
        w.credential,
        Object.entries(w.statuses)
          .map(([k, v]) => (Object.keys(w.statuses).length === 1 ? k : `${k}x${v}`))
          .join(' '),
        w.cpuP50Ms.toFixed(3),
        w.cpuP99Ms.toFixed(3),
        w.cpuMeanMs.toFixed(3),
        `${w.mainThreadCpuP50Ms.toFixed(3)} / ${w.mainThreadCpuP99Ms.toFixed(3)}`,
        w.cpuP99WithoutGcMs.toFixed(3),
        String(w.callsOverlappingGc),
        w.wallP50Ms.toFixed(3),
        w.wallP99Ms.toFixed(3),
        w.callsWithExtraRoundTrips
          ? `${w.dbRoundTripsPerRequest} (max ${w.dbRoundTripsMax} on ${w.callsWithExtraRoundTrips} calls)`
          : String(w.dbRoundTripsPerRequest),
      ]),
      [false, false, true, true, true, true, true, true, true, true, true, true],
    ),
  );
  out.push(
    '  main-thread: process.threadCpuUsage() (no GC helper threads, no libuv pool); p99 w/o GC: calls no garbage collection overlapped.',
    "  DynamoDB trips/req: median over the measured calls (steady state), counted by wrapping the document client's send.",
  );
  for (const w of warm) out.push(`  ${w.route} (${w.credential}): ${w.why}; DynamoDB calls: ${w.dbCommands.join(' + ') || 'none'}`);

  out.push(
    '',
    `Warm handler CPU outside I/O: above the floor (floor = the same DynamoDB commands through the bare document client, bundled like the baseline; ` +
      `measured interleaved with the route, ${warm[0]?.iterations ?? 0} calls each; budget overhead p50 <= ${OVERHEAD_BUDGET.p50Ms} ms, p99 <= ${OVERHEAD_BUDGET.p99Ms} ms)`,
    '',
  );
  out.push(
    table(
      [
        'route',
        'credential',
        'cpu p50 ms',
        'cpu p99 ms',
        'floor p50 ms',
        'floor p99 ms',
        'overhead p50 ms',
        'overhead p99 ms',
        'KMS calls/req',
        'overhead ok',
        '',
      ],
      warm.map((w) => [
        w.route,
        w.credential,
        w.cpuP50Ms.toFixed(3),
        w.cpuP99Ms.toFixed(3),
        w.floor.cpuP50Ms.toFixed(3),
        w.floor.cpuP99Ms.toFixed(3),
        w.overheadP50Ms.toFixed(3),
        w.overheadP99Ms.toFixed(3),
        String(w.kmsCallsPerRequest),
        w.overheadOk ? 'yes' : 'NO',
        w.overheadOk ? '' : 'OVER BUDGET',
      ]),
      [false, false, true, true, true, true, true, true, true, false, false],
    ),
  );

  if (cold.length) {
    out.push(
      '',
      `Cold start to first answer (${cold[0]!.runs} fresh node processes per case: import the deploy bundle, answer one request on DynamoDB Local; ` +
        'floor = the floor bundle, same commands: import, first call). Lazy loading shows here: the chunks and schemas a first request needs count.',
      '',
    );
    out.push(
      table(
        ['route', 'credential', 'status', 'first answer p50 ms', 'import', 'first call', 'floor p50 ms', 'import', 'first call', 'ratio'],
        cold.map((c) => [
          c.route,
          c.credential,
          String(c.status),
          c.firstAnswerP50Ms.toFixed(1),
          c.importP50Ms.toFixed(1),
          c.firstCallP50Ms.toFixed(1),
          c.floor.firstAnswerP50Ms.toFixed(1),
          c.floor.importP50Ms.toFixed(1),
          c.floor.firstCallP50Ms.toFixed(1),
          c.ratio.toFixed(2),
        ]),
        [false, false, true, true, true, true, true, true, true, true],
      ),
    );
  }

  if (throughput) {
    const t0 = throughput[0]!;
    out.push(
      '',
      `Throughput (autocannon, ${t0.connections} connections, ${t0.durationSeconds} s after a ${t0.warmupSeconds} s warm-up, Bearer JWT; ` +
        `platform = the local server with the real handlers, bare = node:http making the floor's DynamoDB calls; same DynamoDB Local; target ratio >= ${THROUGHPUT_RATIO_TARGET})`,
      '',
    );
    out.push(
      table(
        ['route', 'platform req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'bare req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'ratio', 'ok', ''],
        throughput.map((t) => [
          t.route,
          t.platform.requestsPerSecond.toFixed(0),
          String(t.platform.latencyP50Ms),
          String(t.platform.latencyP99Ms),
          String(t.platform.non2xx + t.platform.errors),
          t.bare.requestsPerSecond.toFixed(0),
          String(t.bare.latencyP50Ms),
          String(t.bare.latencyP99Ms),
          String(t.bare.non2xx + t.bare.errors),
          t.ratio.toFixed(2),
          t.ratio >= THROUGHPUT_RATIO_TARGET ? 'yes' : 'NO',
          t.ratio >= THROUGHPUT_RATIO_TARGET ? '' : 'UNDER TARGET',
        ]),
        [false, true, true, true, true, true, true, true, true, true, false, false],
      ),
    );
  }

  const p = PRICES_US_EAST_1;
  const usd = (x: number) => `$${x.toFixed(4)}`;
  out.push(
    '',
    `Cost per million requests, USD (Lambda arm64 ${LAMBDA_MEMORY_MB} MB billed at the measured cpu p50 rounded up to whole ms; DynamoDB on-demand units of the counted commands)`,
    '',
  );
  out.push(
    table(
      [
        'route',
        'credential',
        'API Gateway',
        'Lambda requests',
        'billed ms',
        'Lambda duration',
        'DynamoDB RRU',
        'reads',
        'DynamoDB WRU',
        'writes',
        'KMS',
        'total',
      ],
      costs.map((c) => [
        c.route,
        c.credential,
        usd(c.perMillionUsd.apiGateway),
        usd(c.perMillionUsd.lambdaRequests),
        String(c.perMillionUsd.billedMs),
        usd(c.perMillionUsd.lambdaDuration),
        String(c.dbRequestUnits.reads),
        usd(c.perMillionUsd.dynamoReads),
        String(c.dbRequestUnits.writes),
        usd(c.perMillionUsd.dynamoWrites),
        usd(c.perMillionUsd.kms),
        usd(c.perMillionUsd.total),
      ]),
      [false, false, true, true, true, true, true, true, true, true, true, true],
    ),
  );
  out.push(
    `  Prices (${p.source}): API Gateway HTTP API $${p.apiGatewayHttpPerMillion.toFixed(2)}/million requests; Lambda $${p.lambdaRequestsPerMillion.toFixed(2)}/million requests + ` +
      `$${p.lambdaArm64PerGbSecond}/GB-s (arm64); DynamoDB on-demand $${p.dynamoReadRequestUnitPerMillion}/million RRU, $${p.dynamoWriteRequestUnitPerMillion}/million WRU; ` +
      `KMS $${p.kmsPerTenThousand}/10,000 requests.`,
    '  Units assume items <= 1 KB written and <= 4 KB read; eventually consistent reads are 0.5 RRU. Lambda bills wall time, including the wait on DynamoDB this CPU figure leaves out.',
  );

  if (wake) {
    out.push(
      '',
      `Wake-to-first-answer (${wake.runs} runs: an idle-stopped agent on the local runtime, a chat until its answer, fake model on loopback): ` +
        `p50 ${wake.p50Ms} ms, p99 ${wake.p99Ms} ms (samples ${wake.samplesMs.join(', ')} ms; target p50 <= ${wake.targetP50Ms} ms)${wake.ok ? '' : ' OVER TARGET'}`,
    );
  }
  if (edge) out.push('', edgeSummary(edge));

  if (!tracing) return;
  out.push(
    '',
    `Tracing init (median of ${tracing.runs} fresh processes, trivial handler with CDK's bundle settings): Lambda active tracing ${tracing.none.initMedianMs.toFixed(2)} ms, ${tracing.none.bytes} B` +
      (tracing.powertools
        ? `; Powertools Tracer ${tracing.powertools.initMedianMs.toFixed(2)} ms, ${fmtBytes(tracing.powertools.bytes)} (+${tracing.addedInitMs!.toFixed(2)} ms init per cold start)`
        : `; Powertools Tracer not measured: ${tracing.note}`),
  );
}

// The web console's initial download (web/): its JS + CSS gzipped, against its own budget.
const WEB_CONSOLE_BUDGET_GZIP_KB = 100;
const consoleBuild = (await import('#build/web-console')).buildConsole(path.join(DIST, 'web-console'));
const webConsole = {
  files: consoleBuild.files,
  bytes: consoleBuild.bytes,
  gzipBytes: consoleBuild.gzipBytes,
  gzipKb: round(consoleBuild.gzipBytes / KB, 1),
  budgetGzipKb: WEB_CONSOLE_BUDGET_GZIP_KB,
  ok: consoleBuild.gzipBytes <= WEB_CONSOLE_BUDGET_GZIP_KB * KB,
};
out.push(
  '',
  `Web console initial JS + CSS: ${webConsole.gzipKb} KB gzipped (${fmtBytes(webConsole.bytes)} minified) of a ${WEB_CONSOLE_BUDGET_GZIP_KB} KB budget` +
    `${webConsole.ok ? '' : ' OVER BUDGET'} (${webConsole.files.join(', ')})`,
);

const warmOver = warm.filter((w) => !w.overheadOk);
const durationS = (performance.now() - startedAt) / 1000;
const loadAtEnd = os.loadavg()[0]!;
// Timings on a shared two-core machine mean little when other work competes for the cores.
const busy = Math.max(loadAtStart, loadAtEnd) > os.cpus().length;
if (busy) {
  out.push(
    '',
    `WARNING: machine busy (1-min load average ${loadAtStart.toFixed(1)} at start, ${loadAtEnd.toFixed(1)} at end, on ${os.cpus().length} CPUs): ` +
      'init and CPU timings are inflated; sizes are exact. Re-run on an idle machine before judging the timing budgets.',
  );
}
const medianInitKb = rows.length ? round(median(rows.map((r) => r.initKb)), 1) : undefined;
out.push(
  '',
  `SUMMARY: ${medianInitKb === undefined ? '' : `median init ${medianInitKb} KB (target <= ${BUDGET.medianInitKb} KB); `}${warmOnly ? 'functions not measured (--warm-only)' : over.length ? `${over.length}/${rows.length} functions OVER BUDGET (${over.map((r) => r.name).join(', ')})` : `all ${rows.length} functions within budget`}; ` +
    `${only ? 'warm CPU not measured (--only)' : warmOver.length ? `${warmOver.length}/${warm.length} warm routes OVER BUDGET (CPU above the floor)` : `all ${warm.length} warm routes within the CPU budget (CPU above the floor)`}; ` +
    `${wake ? `wake-to-first-answer p50 ${wake.p50Ms} ms; ` : ''}` +
    `${throughput ? `throughput ratio ${throughput.map((t) => `${t.route} ${t.ratio.toFixed(2)}`).join(', ')}; ` : ''}` +
    `bench took ${durationS.toFixed(1)} s.`,
  '',
);
process.stdout.write(out.join('\n'));

const results = {
  generatedAt: new Date().toISOString(),
  node: process.version,
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? 'unknown',
    platform: `${os.platform()} ${os.arch()}`,
    loadAverage1m: { start: round(loadAtStart, 2), end: round(loadAtEnd, 2) },
    busy,
  },
  budgets: {
    ...BUDGET,
    warmOverheadP50Ms: OVERHEAD_BUDGET.p50Ms,
    warmOverheadP99Ms: OVERHEAD_BUDGET.p99Ms,
    throughputRatio: THROUGHPUT_RATIO_TARGET,
  },
  initMethod: {
    runsPerBundle: INIT_RUNS,
    lazyLoadRunsPerBundle: LAZY_RUNS,
    statistic: 'median',
    order: 'round-robin, one process at a time, warm-up round discarded',
    env: { ...INIT_ENV, JWT_SECRET: '(dummy)' },
  },
  baseline: {
    name: 'baseline',
    initBytes: baseline.initBytes,
    initKb: round(baseline.initBytes / KB, 1),
    packageBytes: baseline.packageBytes,
    packageKb: round(baseline.packageBytes / KB, 1),
    lazyChunks: baseline.lazyChunks.length,
    lazyLoadMedianMs: baseline.lazyChunks.length ? round(median(lazySamples.get('baseline')!), 2) : 0,
    initMedianMs: round(baselineMedian, 2),
    initSamplesMs: samples.get('baseline')!.map((x) => round(x, 2)),
  },
  functions: rows,
  warm,
  coldFirstAnswer: cold,
  throughput,
  wake,
  edge,
  cost: { prices: PRICES_US_EAST_1, lambdaMemoryMb: LAMBDA_MEMORY_MB, perRoute: costs },
  tracing,
  webConsole,
  summary: {
    functionsOverBudget: over.map((r) => r.name),
    medianInitKb,
    warmRoutesOverBudget: warmOver.map((w) => `${w.route} (${w.credential})`),
    throughputRatios: throughput?.map((t) => `${t.route}: ${t.ratio}`),
    coldFirstAnswerRatios: cold.map((c) => `${c.route} (${c.credential}): ${c.ratio}`),
    wakeToFirstAnswerP50Ms: wake?.p50Ms,
    durationSeconds: round(durationS, 1),
  },
};
// Each run's figures go to an ignored folder, so a bench leaves the clone clean; the committed
// reference copy (bench/results.json) changes only when asked: `npm run bench -- --save-reference`.
// A long --only list would make a file name over the file system's 255-byte limit: past a few names, the count.
const onlyName = only && (only.length <= 6 ? only.join('+') : `${only.length}-functions`);
const latest = path.join(ROOT, 'bench', 'results', only ? `only-${onlyName}.json` : warmOnly ? 'warm-only.json' : 'latest.json');
mkdirSync(path.dirname(latest), { recursive: true });
writeFileSync(latest, `${JSON.stringify(results, null, 2)}\n`);
progress(`wrote bench/results/${path.basename(latest)}`);
if (process.argv.includes('--save-reference')) {
  writeFileSync(path.join(ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  progress(`wrote the reference copy bench/results.json`);
}
