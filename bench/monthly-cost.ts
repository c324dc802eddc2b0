import { App } from 'aws-cdk-lib';
import { fargateCpuFor } from '#adapters/launcher-ecs';
import { contract } from '#contract';
import { instanceMemoryMiB, isPlanName, PLAN_NAMES, type PlanName } from '#domain/billing/plans';
import { readConcurrency } from '#lib/concurrency';
import { AVAILABILITY_ZONES } from '#lib/constructs/compute';
import { EDGE_SCALING, EDGE_TASK_SIZE } from '#lib/constructs/edge';
import { concurrencyFunctions, QUEUE_CONSUMERS } from '#lib/constructs/functions';
import { LAMBDA_MEMORY_MB } from '#lib/function-sizing';
import { readSettings } from '#lib/platform-stack';
import { costPerMillion, PRICES_US_EAST_1 } from './cost';
import { docBlock, withDocBlock } from '#build/doc-blocks';

/**
 * `npm run cost`: what a month of the platform costs, from the settings the stack reads (the CDK
 * context: cdk.json and `-c key=value`, validated by the stack's own readers) and the per-request
 * figures the bench measured (bench/results.json), priced at PRICES_US_EAST_1. The stack's shape is
 * counted here from the same constants the constructs use; test/infra/operability.test.ts checks the
 * counts against the synthesized template, so the two cannot drift apart silently.
 */

export type Prices = typeof PRICES_US_EAST_1;

export const HOURS_PER_MONTH = 730;
const SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600;
const GIB = 1024 ** 3;

/**
 * What the estimate assumes where nothing measured it; each is printed with the table, and each
 * can be changed from the command line only by editing it here, on purpose: a figure someone
 * changes should be argued in review.
 */
export const ASSUMPTIONS = {
  /** Lambda gives a function a whole vCPU at this memory and a share in proportion below it; the bench measured on a whole core. */
  lambdaFullVcpuMb: 1769,
  dynamoRoundTripMs: 4,
  logBytesPerRequest: 1024,
  responseBytesPerRequest: 2048,
  /** The default X-Ray rule Lambda's active tracing applies: the first request each second, then this share. */
  xrayReservoirPerSecond: 1,
  xrayFixedRate: 0.05,
  /** The heartbeat's schedules (lib/constructs/functions.ts), each run billed this long. */
  scheduleRunsPerHour: 60 + 12,
  scheduleRunMs: 200,
  /** Heartbeat checks of one agent per hour and what each costs the sweep. */
  heartbeatChecksPerHour: 12,
  heartbeatCheckMs: 20,
  heartbeatCheckWriteUnits: 1,
  /** An idle SQS event source: Lambda's long polls, this many at once, each as long as SQS allows. */
  sqsIdlePollers: 5,
  sqsLongPollSeconds: 20,
  /** Container Insights metrics of the cluster, the edge service and the two task families. */
  containerInsightsMetrics: 40,
  /** Load balancer capacity units: new connections per second each; every edge request assumed a new connection. */
  lcuNewConnectionsPerSecond: 25,
  edgeBytesPerRequest: 10240,
  /** One model call through the platform's model layer (the runtime-model function), and the model's pace. */
  tokensPerModelCall: 2000,
  outputTokenShare: 0.25,
  outputTokensPerSecond: 50,
  bytesPerToken: 6,
} as const;

export type Assumptions = typeof ASSUMPTIONS;

/**
 * Classes of API request, each priced from one route the bench measured warm; `share` is the
 * default mix `--requests` is spread over.
 */
export const ROUTE_CLASSES = [
  { id: 'public', label: 'public read, no credential', route: 'GET /api/infra-mcp/info', credential: 'none', share: 0.1 },
  { id: 'read', label: 'signed-in read', route: 'GET /api/keys', credential: 'jwt', share: 0.3 },
  { id: 'limited', label: 'signed-in read with a rate limit', route: 'GET /api/agents', credential: 'jwt', share: 0.3 },
  { id: 'write', label: 'signed-in write', route: 'POST /api/memory', credential: 'jwt', share: 0.2 },
  { id: 'apiKey', label: 'API key (sk_) call with a rate limit', route: 'GET /api/agents/provision', credential: 'apiKey', share: 0.1 },
] as const;

export type RouteClassId = (typeof ROUTE_CLASSES)[number]['id'];

/** What the bench recorded of one warm route (bench/results.json `warm`). */
export interface WarmFigure {
  route: string;
  credential: string;
  cpuMeanMs: number;
  dbRoundTripsPerRequest: number;
  dbRequestUnits: { reads: number; writes: number };
  kmsCallsPerRequest: number;
}

export interface BenchFigures {
  generatedAt?: string;
  warm: WarmFigure[];
}

/** The parts of the stack the bill depends on, as the settings make them. */
export interface StackShape {
  stage: string;
  natGateways: number;
  /** Interface endpoints (SQS, KMS, ECS) when `awsInterfaceEndpoints` is on, each in every zone. */
  interfaceEndpoints: number;
  zones: number;
  /** Every Lambda function, streaming twins included. */
  functions: number;
  alarms: number;
  /** CloudWatch bills an alarm per metric it reads: a metric-math alarm per metric of its expression. */
  alarmMetrics: number;
  dashboards: number;
  kmsKeys: number;
  secrets: number;
  edgeTasks: number;
  edgeTaskCpu: number;
  edgeTaskMemoryMiB: number;
  queueEventSources: number;
  /** Reserved concurrency is free; printed as the ceiling it sets. */
  reservedConcurrency: number;
}

/**
 * The alarms of lib/constructs/monitoring.ts with the metrics each reads: the dead-letter queues,
 * the provisioning backlog, the API's 5xx rate (requests, errors), the table's throttles and system
 * errors (every table operation each), stuck provisioning, the edge's 5xx rate (requests, two error
 * counts), its unhealthy targets and connections; then one per function over errors + throttles.
 */
const FIXED_ALARM_METRICS = [1, 1, 1, 1, 2, 9, 9, 1, 3, 1, 1];
const FUNCTION_ALARM_METRICS = 2;
const INTERFACE_ENDPOINT_SERVICES = 3;
/** The JWT key and the operator's secret (lib/constructs/secrets.ts). */
const STACK_SECRETS = 2;

/** CDK context as `cdk` would hand it to the app: cdk.json's, then each `-c key=value` (a string) over it. */
export function contextOf(cdkJsonContext: Record<string, unknown>, flags: readonly string[]): Record<string, unknown> {
  const context = { ...cdkJsonContext };
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at < 1) throw new Error(`-c takes key=value: ${flag}`);
    context[flag.slice(0, at)] = flag.slice(at + 1);
  }
  return context;
}

/** The stack's shape from CDK context, refused on the same errors `cdk synth` refuses. */
export function stackShape(context: Record<string, unknown>): StackShape {
  const app = new App({ context });
  const settings = readSettings(app.node);
  const functions = concurrencyFunctions(contract);
  const concurrency = readConcurrency(app.node, functions, QUEUE_CONSUMERS);
  const alarms = FIXED_ALARM_METRICS.length + functions.length;
  return {
    stage: settings.stage,
    natGateways: settings.natGateways,
    interfaceEndpoints: settings.awsInterfaceEndpoints ? INTERFACE_ENDPOINT_SERVICES : 0,
    zones: AVAILABILITY_ZONES,
    functions: functions.length,
    alarms,
    alarmMetrics: FIXED_ALARM_METRICS.reduce((a, b) => a + b, 0) + FUNCTION_ALARM_METRICS * functions.length,
    dashboards: 1,
    kmsKeys: 1,
    secrets: STACK_SECRETS,
    edgeTasks: EDGE_SCALING.minCapacity,
    edgeTaskCpu: EDGE_TASK_SIZE.cpu,
    edgeTaskMemoryMiB: EDGE_TASK_SIZE.memoryLimitMiB,
    queueEventSources: QUEUE_CONSUMERS.length,
    reservedConcurrency: [...concurrency.reserved.values()].reduce((a, b) => a + b, 0),
  };
}

export interface Usage {
  agents: number;
  plan: PlanName;
  requests: number;
  mix: Record<RouteClassId, number>;
  edgeRequests: number;
  consoleRequests: number;
  tokens: number;
}

export const DEFAULT_USAGE: Usage = {
  agents: 10,
  plan: 'solo',
  requests: 1_000_000,
  mix: Object.fromEntries(ROUTE_CLASSES.map((c) => [c.id, c.share])) as Record<RouteClassId, number>,
  edgeRequests: 1_000_000,
  consoleRequests: 1_000_000,
  tokens: 10_000_000,
};

/** One priced item: dollars a month (or per unit), and the arithmetic that gave them. */
export interface Line {
  item: string;
  usd: number;
  basis: string;
}

export interface RouteClassCost {
  id: RouteClassId;
  label: string;
  route: string;
  billedMs: number;
  perMillionUsd: number;
  parts: Line[];
}

export interface Estimate {
  region: 'us-east-1';
  prices: Prices;
  assumptions: Assumptions;
  benchGeneratedAt?: string;
  shape: StackShape;
  idle: Line[];
  idleUsd: number;
  perAgent: { plan: PlanName; memoryMiB: number; cpu: number; lines: Line[]; usd: number }[];
  perMillionRequests: RouteClassCost[];
  perMillionEdgeRequests: Line[];
  perMillionConsoleRequests: Line[];
  perMillionTokens: Line[];
  usage: Usage;
  month: Line[];
  monthUsd: number;
  notPriced: string[];
}

const usd = (n: number) => (n === 0 ? '$0' : `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`);
const sum = (lines: readonly Line[]) => lines.reduce((total, l) => total + l.usd, 0);
const count = (n: number) => n.toLocaleString('en-US');

/** Traces X-Ray records of `invocations` spread evenly over a month under the default rule. */
export function tracedPerMonth(invocations: number, a: Assumptions = ASSUMPTIONS): number {
  const reservoir = a.xrayReservoirPerSecond * SECONDS_PER_MONTH;
  return Math.min(invocations, reservoir) + a.xrayFixedRate * Math.max(0, invocations - reservoir);
}

/** Lambda GB-seconds of `ms` at the functions' memory. */
const gbSeconds = (ms: number) => (ms / 1000) * (LAMBDA_MEMORY_MB / 1024);

function fargateMonth(cpu: number, memoryMiB: number, p: Prices): number {
  return ((cpu / 1024) * p.fargateArm64PerVcpuHour + (memoryMiB / 1024) * p.fargateArm64PerGbHour) * HOURS_PER_MONTH;
}

/** Dollars per million requests of one class, from its warm bench figure. */
export function routeClassCost(cls: (typeof ROUTE_CLASSES)[number], figure: WarmFigure, p: Prices, a: Assumptions): RouteClassCost {
  // Wall time in Lambda: the measured CPU stretched to the function's share of a vCPU, plus each DynamoDB round trip.
  const lambdaMs = figure.cpuMeanMs * (a.lambdaFullVcpuMb / LAMBDA_MEMORY_MB) + figure.dbRoundTripsPerRequest * a.dynamoRoundTripMs;
  const row = costPerMillion(lambdaMs, figure.dbRequestUnits, figure.kmsCallsPerRequest, p);
  const logs = ((1e6 * a.logBytesPerRequest) / GIB) * p.cloudWatchLogsIngestPerGb;
  const transfer = ((1e6 * a.responseBytesPerRequest) / GIB) * p.transferOutPerGb;
  const parts: Line[] = [
    { item: 'API Gateway', usd: row.apiGateway, basis: `${usd(p.apiGatewayHttpPerMillion)} per million` },
    { item: 'Lambda requests', usd: row.lambdaRequests, basis: `${usd(p.lambdaRequestsPerMillion)} per million` },
    {
      item: 'Lambda duration',
      usd: row.lambdaDuration,
      basis: `${row.billedMs} ms billed (${figure.cpuMeanMs} ms CPU measured, ${figure.dbRoundTripsPerRequest} DynamoDB round trips) at ${LAMBDA_MEMORY_MB} MB`,
    },
    { item: 'DynamoDB reads', usd: row.dynamoReads, basis: `${figure.dbRequestUnits.reads} read units` },
    { item: 'DynamoDB writes', usd: row.dynamoWrites, basis: `${figure.dbRequestUnits.writes} write units` },
    { item: 'KMS', usd: row.kms, basis: `${figure.kmsCallsPerRequest} calls` },
    { item: 'CloudWatch Logs', usd: logs, basis: `${a.logBytesPerRequest} bytes a request` },
    { item: 'Transfer out', usd: transfer, basis: `${a.responseBytesPerRequest} bytes a response` },
  ];
  return { id: cls.id, label: cls.label, route: `${cls.route} (${cls.credential})`, billedMs: row.billedMs, perMillionUsd: sum(parts), parts };
}

function figureOf(bench: BenchFigures, cls: (typeof ROUTE_CLASSES)[number]): WarmFigure {
  const figure = bench.warm.find((w) => w.route === cls.route && w.credential === cls.credential);
  if (!figure) throw new Error(`bench/results.json has no warm figure for ${cls.route} (${cls.credential}): run npm run bench -- --save-reference`);
  return figure;
}

/** The whole estimate; every figure is a product of a price, a count from the shape or usage, and an assumption. */
export function estimate(
  shape: StackShape,
  bench: BenchFigures,
  usage: Usage = DEFAULT_USAGE,
  p: Prices = PRICES_US_EAST_1,
  a: Assumptions = ASSUMPTIONS,
): Estimate {
  const h = HOURS_PER_MONTH;
  const publicIps = shape.natGateways + shape.zones;
  const scheduleRuns = a.scheduleRunsPerHour * h;
  const sqsIdleRequests = shape.queueEventSources * a.sqsIdlePollers * (SECONDS_PER_MONTH / a.sqsLongPollSeconds);
  const idle: Line[] = [
    { item: 'NAT gateways', usd: shape.natGateways * p.natGatewayPerHour * h, basis: `${shape.natGateways} × ${usd(p.natGatewayPerHour)}/h × ${h} h` },
    {
      item: 'Public IPv4 addresses',
      usd: publicIps * p.publicIpv4PerHour * h,
      basis: `${publicIps} (each NAT gateway's, the load balancer's in ${shape.zones} zones) × ${usd(p.publicIpv4PerHour)}/h`,
    },
    { item: "Agent edge's load balancer", usd: p.loadBalancerPerHour * h, basis: `${usd(p.loadBalancerPerHour)}/h, capacity units priced per request` },
    {
      item: "Agent edge's Fargate tasks",
      usd: shape.edgeTasks * fargateMonth(shape.edgeTaskCpu, shape.edgeTaskMemoryMiB, p),
      basis: `${shape.edgeTasks} × ${shape.edgeTaskCpu / 1024} vCPU, ${shape.edgeTaskMemoryMiB / 1024} GB ARM64`,
    },
    {
      item: 'Interface endpoints',
      usd: shape.interfaceEndpoints * shape.zones * p.interfaceEndpointPerAzHour * h,
      basis: shape.interfaceEndpoints
        ? `${shape.interfaceEndpoints} × ${shape.zones} zones × ${usd(p.interfaceEndpointPerAzHour)}/h`
        : 'awsInterfaceEndpoints off',
    },
    {
      item: 'CloudWatch alarms',
      usd: shape.alarmMetrics * p.alarmPerMetricMonth,
      basis: `${shape.alarms} alarms reading ${shape.alarmMetrics} metrics × ${usd(p.alarmPerMetricMonth)}`,
    },
    { item: 'CloudWatch dashboard', usd: shape.dashboards * p.dashboardPerMonth, basis: `${shape.dashboards} × ${usd(p.dashboardPerMonth)}` },
    {
      item: 'Container Insights',
      usd: a.containerInsightsMetrics * p.containerInsightsMetricPerMonth,
      basis: `${a.containerInsightsMetrics} metrics (assumed) × ${usd(p.containerInsightsMetricPerMonth)}`,
    },
    {
      item: 'KMS key',
      usd: shape.kmsKeys * p.kmsKeyPerMonth,
      basis: `${shape.kmsKeys} × ${usd(p.kmsKeyPerMonth)} in its first year (its first two yearly rotations add as much each)`,
    },
    { item: 'Secrets Manager', usd: shape.secrets * p.secretPerMonth, basis: `${shape.secrets} secrets × ${usd(p.secretPerMonth)}` },
    {
      item: 'SQS polling while idle',
      usd: (sqsIdleRequests / 1e6) * p.sqsRequestsPerMillion,
      basis: `${shape.queueEventSources} event sources × ${a.sqsIdlePollers} long polls of ${a.sqsLongPollSeconds} s`,
    },
    {
      item: 'Scheduled sweeps',
      usd: (scheduleRuns / 1e6) * p.lambdaRequestsPerMillion + scheduleRuns * gbSeconds(a.scheduleRunMs) * p.lambdaArm64PerGbSecond,
      basis: `${count(scheduleRuns)} runs × ${a.scheduleRunMs} ms`,
    },
    {
      item: 'X-Ray traces of the sweeps',
      usd: (tracedPerMonth(scheduleRuns, a) / 1e6) * p.xrayTracesPerMillion,
      basis: `${count(Math.round(tracedPerMonth(scheduleRuns, a)))} traces × ${usd(p.xrayTracesPerMillion)} per million`,
    },
  ];

  const perAgent = PLAN_NAMES.map((plan) => {
    const memoryMiB = instanceMemoryMiB(plan);
    const cpu = fargateCpuFor(memoryMiB);
    const checks = a.heartbeatChecksPerHour * h;
    const lines: Line[] = [
      { item: 'Fargate task', usd: fargateMonth(cpu, memoryMiB, p), basis: `${cpu / 1024} vCPU, ${memoryMiB / 1024} GB ARM64 × ${h} h` },
      { item: 'Public IPv4', usd: 0, basis: 'none: tasks run in private subnets without a public address' },
      {
        item: 'Heartbeat checks',
        usd:
          checks * gbSeconds(a.heartbeatCheckMs) * p.lambdaArm64PerGbSecond +
          ((checks * a.heartbeatCheckWriteUnits) / 1e6) * p.dynamoWriteRequestUnitPerMillion,
        basis: `${count(checks)} checks × ${a.heartbeatCheckMs} ms and ${a.heartbeatCheckWriteUnits} write unit`,
      },
    ];
    return { plan, memoryMiB, cpu, lines, usd: sum(lines) };
  });

  const perMillionRequests = ROUTE_CLASSES.map((cls) => routeClassCost(cls, figureOf(bench, cls), p, a));

  const lcuByConnections = 1e6 / a.lcuNewConnectionsPerSecond / 3600;
  const lcuByBytes = (1e6 * a.edgeBytesPerRequest) / GIB;
  const perMillionEdgeRequests: Line[] = [
    {
      item: 'Load balancer capacity units',
      usd: Math.max(lcuByConnections, lcuByBytes) * p.loadBalancerPerLcuHour,
      basis: `${Math.max(lcuByConnections, lcuByBytes).toFixed(1)} LCU-hours (new connections, or ${a.edgeBytesPerRequest} bytes a request, the larger)`,
    },
    {
      item: 'Edge tasks',
      usd: 0,
      basis: `within the ${shape.edgeTasks} tasks up to ${EDGE_SCALING.requestsPerTargetPerMinute} requests a minute each; more tasks past it`,
    },
  ];
  const perMillionConsoleRequests: Line[] = [
    { item: 'CloudFront requests', usd: p.cloudFrontHttpsRequestsPerMillion, basis: `${usd(p.cloudFrontHttpsRequestsPerMillion)} per million HTTPS requests` },
    {
      item: 'CloudFront transfer out',
      usd: ((1e6 * a.responseBytesPerRequest) / GIB) * p.cloudFrontTransferOutPerGb,
      basis: `${a.responseBytesPerRequest} bytes a response`,
    },
  ];

  const calls = 1e6 / a.tokensPerModelCall;
  const waitSeconds = (1e6 * a.outputTokenShare) / a.outputTokensPerSecond;
  const writeClass = perMillionRequests.find((c) => c.id === 'write')!;
  const perMillionTokens: Line[] = [
    {
      item: 'Model calls as API requests',
      usd: (calls / 1e6) * writeClass.perMillionUsd,
      basis: `${count(calls)} calls of ${a.tokensPerModelCall} tokens, each priced as a ${writeClass.label}`,
    },
    {
      item: 'Lambda waiting on the model',
      usd: waitSeconds * (LAMBDA_MEMORY_MB / 1024) * p.lambdaArm64PerGbSecond,
      basis: `${count(waitSeconds)} s: ${a.outputTokenShare * 100}% output tokens at ${a.outputTokensPerSecond} a second`,
    },
    {
      item: 'NAT data (runtime to the API and back)',
      usd: ((1e6 * a.bytesPerToken) / GIB) * p.natGatewayPerGb,
      basis: `${a.bytesPerToken} bytes a token × ${usd(p.natGatewayPerGb)}/GB`,
    },
  ];

  const agentCost = perAgent.find((x) => x.plan === usage.plan)!;
  const shares = Object.values(usage.mix).reduce((x, y) => x + y, 0);
  const perMillionMixed = perMillionRequests.reduce((total, c) => total + (c.perMillionUsd * usage.mix[c.id]) / shares, 0);
  const modelCalls = (usage.tokens / 1e6) * calls;
  const usageTraces = tracedPerMonth(usage.requests + modelCalls + scheduleRuns, a) - tracedPerMonth(scheduleRuns, a);
  const idleUsd = sum(idle);
  const month: Line[] = [
    { item: 'Idle baseline', usd: idleUsd, basis: 'the stack with no traffic and no agent' },
    { item: `Always-on agents (${usage.plan})`, usd: usage.agents * agentCost.usd, basis: `${usage.agents} × ${usd(agentCost.usd)}` },
    {
      item: 'API requests',
      usd: (usage.requests / 1e6) * perMillionMixed,
      basis: `${count(usage.requests)} in the class mix × ${usd(perMillionMixed)} per million`,
    },
    {
      item: 'X-Ray traces of the requests',
      usd: (usageTraces / 1e6) * p.xrayTracesPerMillion,
      basis: `${count(Math.round(usageTraces))} traced (the first each second, ${a.xrayFixedRate * 100}% of the rest)`,
    },
    {
      item: 'Agent edge requests',
      usd: (usage.edgeRequests / 1e6) * sum(perMillionEdgeRequests),
      basis: `${count(usage.edgeRequests)} × ${usd(sum(perMillionEdgeRequests))} per million`,
    },
    {
      item: 'Console (CloudFront) requests',
      usd: (usage.consoleRequests / 1e6) * sum(perMillionConsoleRequests),
      basis: `${count(usage.consoleRequests)} × ${usd(sum(perMillionConsoleRequests))} per million`,
    },
    {
      item: 'Model tokens passed through',
      usd: (usage.tokens / 1e6) * sum(perMillionTokens),
      basis: `${count(usage.tokens)} × ${usd(sum(perMillionTokens))} per million (the provider's own bill aside)`,
    },
  ];

  return {
    region: 'us-east-1',
    prices: p,
    assumptions: a,
    benchGeneratedAt: bench.generatedAt,
    shape,
    idle,
    idleUsd,
    perAgent,
    perMillionRequests,
    perMillionEdgeRequests,
    perMillionConsoleRequests,
    perMillionTokens,
    usage,
    month,
    monthUsd: sum(month),
    notPriced: [
      "the model provider's bill for the tokens",
      `storage: DynamoDB ${usd(p.dynamoStoragePerGbMonth)}/GB-month plus ${usd(p.dynamoBackupPerGbMonth)}/GB-month of point-in-time recovery, S3 ${usd(p.s3StoragePerGbMonth)}/GB-month, log storage after ingestion`,
      `agents' own traffic through the NAT (${usd(p.natGatewayPerGb)}/GB) and out to the internet (${usd(p.transferOutPerGb)}/GB), and their log lines`,
      'VPC flow logs of rejected traffic, Container Insights performance events, SES mail, ECR image storage, Route 53 (the zone is the operator’s)',
      'free tiers, savings plans and volume discounts',
    ],
  };
}

/** `--mix public=1,read=3,...`: relative weights of the route classes. */
export function parseMix(text: string): Record<RouteClassId, number> {
  const mix = Object.fromEntries(ROUTE_CLASSES.map((c) => [c.id, 0])) as Record<RouteClassId, number>;
  for (const part of text.split(',').filter(Boolean)) {
    const [id, weight] = part.split('=');
    if (!ROUTE_CLASSES.some((c) => c.id === id)) throw new Error(`--mix: no route class ${id}; classes: ${ROUTE_CLASSES.map((c) => c.id).join(', ')}`);
    const n = Number(weight);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--mix: ${id} needs a weight of 0 or more`);
    mix[id as RouteClassId] = n;
  }
  if (Object.values(mix).every((n) => n === 0)) throw new Error('--mix: give at least one class a weight');
  return mix;
}

export function planOf(text: string): PlanName {
  if (!isPlanName(text)) throw new Error(`--plan: one of ${PLAN_NAMES.join(', ')}`);
  return text;
}

/** A Markdown table whose second column holds the dollars (right-aligned). */
const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 1 ? '---:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const lineRows = (lines: readonly Line[]) => lines.map((l) => [l.item, usd(l.usd), l.basis.replace(/\|/g, '\\|')]);

/** The estimate as Markdown: the table docs/deploy.md carries and the default text output. */
export function renderMarkdown(e: Estimate): string {
  const u = e.usage;
  const s = e.shape;
  return [
    `Monthly estimate, ${e.region} list prices (${e.prices.source}); per-request figures from bench/results.json${e.benchGeneratedAt ? ` of ${e.benchGeneratedAt.slice(0, 10)}` : ''}.`,
    `Stack: ${s.natGateways} NAT gateway${s.natGateways === 1 ? '' : 's'}, interface endpoints ${s.interfaceEndpoints ? 'on' : 'off'}, ${s.functions} functions (reserving ${s.reservedConcurrency} concurrent executions, free), ${s.alarms} alarms, ${s.edgeTasks} edge tasks.`,
    '',
    '**Month**',
    '',
    table(['Item', 'USD / month', 'How'], [...lineRows(e.month), ['**Total**', `**${usd(e.monthUsd)}**`, '']]),
    '',
    `**Idle baseline** (${usd(e.idleUsd)})`,
    '',
    table(['Item', 'USD / month', 'How'], lineRows(e.idle)),
    '',
    '**Per always-on agent, by plan**',
    '',
    table(
      ['Plan', 'USD / month', 'Task'],
      e.perAgent.map((x) => [x.plan, usd(x.usd), `${x.cpu / 1024} vCPU, ${x.memoryMiB / 1024} GB; no public IPv4; heartbeat ${usd(x.lines[2]!.usd)}`]),
    ),
    '',
    '**Per million API requests, by route class**',
    '',
    table(
      ['Class', 'USD / million', 'Measured on', 'Billed ms'],
      e.perMillionRequests.map((c) => [c.label, usd(c.perMillionUsd), c.route, String(c.billedMs)]),
    ),
    '',
    `X-Ray adds ${usd(e.prices.xrayTracesPerMillion)} per million traced requests: every request up to one a second, ${e.assumptions.xrayFixedRate * 100}% of the rest.`,
    '',
    `**Per million agent edge requests** (${usd(sum(e.perMillionEdgeRequests))}), **per million console requests** (${usd(sum(e.perMillionConsoleRequests))}), **per million model tokens** (${usd(sum(e.perMillionTokens))})`,
    '',
    table(['Item', 'USD / million', 'How'], lineRows([...e.perMillionEdgeRequests, ...e.perMillionConsoleRequests, ...e.perMillionTokens])),
    '',
    `Usage priced: ${u.agents} always-on ${u.plan} agents, ${count(u.requests)} API requests, ${count(u.edgeRequests)} edge requests, ${count(u.consoleRequests)} console requests, ${count(u.tokens)} model tokens.`,
    '',
    '**Prices**',
    '',
    table(
      ['Price', 'USD'],
      Object.entries(e.prices)
        .filter(([k]) => k !== 'source')
        .map(([k, v]) => [k, String(v)]),
    ),
    '',
    '**Assumptions**',
    '',
    table(
      ['Assumption', 'Value'],
      Object.entries(e.assumptions).map(([k, v]) => [k, String(v)]),
    ),
    '',
    `Not priced: ${e.notPriced.join('; ')}.`,
  ].join('\n');
}

export const COST_BEGIN = '<!-- cost:begin -->';
export const COST_END = '<!-- cost:end -->';

/** The generated block of docs/deploy.md, markers included. */
export const costBlock = (e: Estimate) =>
  [
    COST_BEGIN,
    '<!-- generated by `npm run cost -- --write` from cdk.json and bench/results.json: edit those, not this table -->',
    '',
    renderMarkdown(e),
    COST_END,
  ].join('\n');

const COST_MARKERS = { begin: COST_BEGIN, end: COST_END, doc: 'docs/deploy.md' };

/** The cost block of `doc`, markers included; undefined when the markers are missing. */
export const costBlockOf = (doc: string): string | undefined => docBlock(doc, COST_MARKERS);

export const withCostBlock = (doc: string, block: string): string => withDocBlock(doc, COST_MARKERS, block);
