import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRICES_US_EAST_1 } from '#bench/cost';
import {
  ASSUMPTIONS,
  contextOf,
  costBlock,
  costBlockOf,
  DEFAULT_USAGE,
  estimate,
  HOURS_PER_MONTH,
  parseMix,
  ROUTE_CLASSES,
  stackShape,
  tracedPerMonth,
  type BenchFigures,
  type Estimate,
  type Prices,
} from '#bench/monthly-cost';
import { contract } from '#contract';
import { WORKERS } from '#lib/constructs/functions';

const root = path.resolve(import.meta.dirname, '../..');
const cdkContext = (JSON.parse(readFileSync(path.join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
const bench = JSON.parse(readFileSync(path.join(root, 'bench/results.json'), 'utf8')) as BenchFigures;
const p = PRICES_US_EAST_1;
const shapeWith = (...flags: string[]) => stackShape(contextOf(cdkContext, flags));
const line = (lines: Estimate['idle'], item: string) => {
  const found = lines.find((l) => l.item === item);
  if (!found) throw new Error(`no line ${item}`);
  return found.usd;
};

describe('npm run cost: the stack the settings make', () => {
  it('reads the settings as cdk does: cdk.json, then each -c key=value over it', () => {
    expect(contextOf({ natGateways: 1, stage: '' }, ['natGateways=2', 'stage=staging'])).toEqual({ natGateways: '2', stage: 'staging' });
    expect(() => contextOf({}, ['natGateways'])).toThrow('key=value');
  });

  it('counts every function, streaming twins included, and one alarm each beside the fixed ones', () => {
    const shape = shapeWith();
    const functions = contract.length + WORKERS.length + contract.filter((g) => g.streams).length;
    expect(shape.functions).toBe(functions);
    expect(shape.alarms).toBe(11 + functions);
    expect(shape.alarmMetrics).toBe(30 + 2 * functions);
  });

  it('refuses the settings the stack refuses', () => {
    expect(() => shapeWith('natGateways=3')).toThrow('natGateways');
    expect(() => shapeWith('functionConcurrency=100')).toThrow('unreserved');
  });
});

describe('npm run cost: the arithmetic', () => {
  const base = estimate(shapeWith(), bench);

  it('prices the idle baseline from the price table and the shape', () => {
    expect(line(base.idle, 'NAT gateways')).toBeCloseTo(p.natGatewayPerHour * HOURS_PER_MONTH, 9);
    expect(line(base.idle, 'Public IPv4 addresses')).toBeCloseTo(3 * p.publicIpv4PerHour * HOURS_PER_MONTH, 9);
    expect(line(base.idle, "Agent edge's Fargate tasks")).toBeCloseTo(2 * (0.5 * p.fargateArm64PerVcpuHour + p.fargateArm64PerGbHour) * HOURS_PER_MONTH, 9);
    expect(line(base.idle, 'CloudWatch alarms')).toBeCloseTo(base.shape.alarmMetrics * p.alarmPerMetricMonth, 9);
    expect(line(base.idle, 'Interface endpoints')).toBe(0);
    expect(base.idleUsd).toBeCloseTo(
      base.idle.reduce((s, l) => s + l.usd, 0),
      9,
    );
  });

  it('changes with the settings: a second NAT gateway, the interface endpoints', () => {
    const twoNats = estimate(shapeWith('natGateways=2'), bench);
    expect(twoNats.idleUsd - base.idleUsd).toBeCloseTo((p.natGatewayPerHour + p.publicIpv4PerHour) * HOURS_PER_MONTH, 9);
    const endpoints = estimate(shapeWith('awsInterfaceEndpoints=true'), bench);
    expect(endpoints.idleUsd - base.idleUsd).toBeCloseTo(3 * 2 * p.interfaceEndpointPerAzHour * HOURS_PER_MONTH, 9);
  });

  it('sizes an agent by its plan: the plan memory, the CPU Fargate needs for it, no public address', () => {
    const solo = base.perAgent.find((x) => x.plan === 'solo')!;
    expect(solo).toMatchObject({ memoryMiB: 2048, cpu: 1024 });
    expect(solo.lines[0]!.usd).toBeCloseTo((p.fargateArm64PerVcpuHour + 2 * p.fargateArm64PerGbHour) * HOURS_PER_MONTH, 9);
    expect(solo.lines[1]).toMatchObject({ item: 'Public IPv4', usd: 0 });
    const network = base.perAgent.find((x) => x.plan === 'network')!;
    expect(network).toMatchObject({ memoryMiB: 16384, cpu: 2048 });
    expect(network.usd).toBeGreaterThan(solo.usd);
  });

  it('prices a route class from its bench figure: stretched CPU plus DynamoDB round trips, units, logs, transfer', () => {
    const figure = {
      route: 'GET /api/keys',
      credential: 'jwt',
      cpuMeanMs: 0,
      dbRoundTripsPerRequest: 2,
      dbRequestUnits: { reads: 1, writes: 2 },
      kmsCallsPerRequest: 0,
    };
    const e = estimate(shapeWith(), { warm: ROUTE_CLASSES.map((c) => ({ ...figure, route: c.route, credential: c.credential })) });
    const read = e.perMillionRequests.find((c) => c.id === 'read')!;
    expect(read.billedMs).toBe(2 * ASSUMPTIONS.dynamoRoundTripMs);
    const GIB = 1024 ** 3;
    expect(read.perMillionUsd).toBeCloseTo(
      p.apiGatewayHttpPerMillion +
        p.lambdaRequestsPerMillion +
        1e6 * (read.billedMs / 1000) * p.lambdaArm64PerGbSecond +
        p.dynamoReadRequestUnitPerMillion +
        2 * p.dynamoWriteRequestUnitPerMillion +
        ((1e6 * ASSUMPTIONS.logBytesPerRequest) / GIB) * p.cloudWatchLogsIngestPerGb +
        ((1e6 * ASSUMPTIONS.responseBytesPerRequest) / GIB) * p.transferOutPerGb,
      9,
    );
  });

  it('refuses bench figures that lack a route class', () => {
    expect(() => estimate(shapeWith(), { warm: [] })).toThrow('npm run bench');
  });

  it('traces every invocation up to one a second, then 5%', () => {
    const month = HOURS_PER_MONTH * 3600;
    expect(tracedPerMonth(1000)).toBe(1000);
    expect(tracedPerMonth(month + 1_000_000)).toBeCloseTo(month + 50_000, 6);
  });

  it('scales with the usage and the prices', () => {
    const more = estimate(base.shape, bench, { ...DEFAULT_USAGE, agents: DEFAULT_USAGE.agents + 1 });
    expect(more.monthUsd - base.monthUsd).toBeCloseTo(base.perAgent.find((x) => x.plan === DEFAULT_USAGE.plan)!.usd, 9);
    const doubled = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'number' ? 2 * v : v])) as Prices;
    expect(estimate(base.shape, bench, DEFAULT_USAGE, doubled).monthUsd).toBeCloseTo(2 * base.monthUsd, 6);
    expect(base.monthUsd).toBeCloseTo(
      base.month.reduce((s, l) => s + l.usd, 0),
      9,
    );
  });

  it('spreads the requests over the class mix', () => {
    const only = (id: string) => estimate(base.shape, bench, { ...DEFAULT_USAGE, mix: parseMix(`${id}=1`) });
    const apiLine = (e: Estimate) => line(e.month, 'API requests');
    expect(apiLine(only('write'))).toBeCloseTo(base.perMillionRequests.find((c) => c.id === 'write')!.perMillionUsd, 9);
    expect(apiLine(only('write'))).toBeGreaterThan(apiLine(only('public')));
    expect(() => parseMix('nope=1')).toThrow('no route class');
    expect(() => parseMix('public=0')).toThrow('at least one');
  });
});

describe('docs/deploy.md cost table', () => {
  it('is what npm run cost -- --write makes of cdk.json and bench/results.json', () => {
    const doc = readFileSync(path.join(root, 'docs/deploy.md'), 'utf8');
    expect(costBlockOf(doc)).toBe(costBlock(estimate(stackShape(cdkContext), bench)));
  });
});
