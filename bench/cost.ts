import { LAMBDA_MEMORY_MB } from '#lib/function-sizing';
import type { RecordedCommand } from './floor';

/**
 * Cost per million requests of a warm case, from what the bench measured: the CPU of a
 * call, its counted DynamoDB commands and KMS calls. List prices of us-east-1, on-demand, without free
 * tiers or volume discounts, as published when this was written; they are printed beside the table.
 */

export const PRICES_US_EAST_1 = {
  source: 'AWS list prices, us-east-1, first pricing tier, no free tier (Nov 2026)',
  apiGatewayHttpPerMillion: 1.0,
  lambdaRequestsPerMillion: 0.2,
  lambdaArm64PerGbSecond: 0.0000133334,
  dynamoWriteRequestUnitPerMillion: 0.625,
  dynamoReadRequestUnitPerMillion: 0.125,
  kmsPerTenThousand: 0.03,
  // What a month of the whole stack costs besides requests (bench/monthly-cost.ts, npm run cost).
  natGatewayPerHour: 0.045,
  natGatewayPerGb: 0.045,
  publicIpv4PerHour: 0.005,
  loadBalancerPerHour: 0.0225,
  loadBalancerPerLcuHour: 0.008,
  fargateArm64PerVcpuHour: 0.03238,
  fargateArm64PerGbHour: 0.00356,
  interfaceEndpointPerAzHour: 0.01,
  alarmPerMetricMonth: 0.1,
  dashboardPerMonth: 3.0,
  kmsKeyPerMonth: 1.0,
  secretPerMonth: 0.4,
  sqsRequestsPerMillion: 0.4,
  xrayTracesPerMillion: 5.0,
  cloudWatchLogsIngestPerGb: 0.5,
  containerInsightsMetricPerMonth: 0.3,
  cloudFrontHttpsRequestsPerMillion: 1.0,
  cloudFrontTransferOutPerGb: 0.085,
  dynamoStoragePerGbMonth: 0.25,
  dynamoBackupPerGbMonth: 0.2,
  s3StoragePerGbMonth: 0.023,
  transferOutPerGb: 0.09,
};

/** Lambda bills duration in whole milliseconds. */
const BILLING_GRANULARITY_MS = 1;

export interface RequestUnits {
  reads: number;
  writes: number;
}

const transactItems = (input: unknown) => ((input as { TransactItems?: unknown[] } | undefined)?.TransactItems ?? []).length;

const batchWriteItems = (input: unknown) =>
  Object.values((input as { RequestItems?: Record<string, unknown[]> } | undefined)?.RequestItems ?? {}).reduce((n, xs) => n + xs.length, 0);

const batchGetUnits = (input: unknown) =>
  Object.values((input as { RequestItems?: Record<string, { Keys?: unknown[]; ConsistentRead?: boolean }> } | undefined)?.RequestItems ?? {}).reduce(
    (n, table) => n + (table.Keys?.length ?? 0) * (table.ConsistentRead ? 1 : 0.5),
    0,
  );

/**
 * On-demand request units of the commands, assuming what this platform stores: items up to 1 KB
 * written and results up to 4 KB read (one unit each); eventually consistent reads are half a unit,
 * transactions twice the units of their items.
 */
export function requestUnits(commands: RecordedCommand[]): RequestUnits {
  let reads = 0;
  let writes = 0;
  for (const c of commands) {
    const consistent = (c.input as { ConsistentRead?: boolean } | undefined)?.ConsistentRead === true;
    switch (c.name) {
      case 'GetCommand':
      case 'QueryCommand':
      case 'ScanCommand':
        reads += consistent ? 1 : 0.5;
        break;
      case 'BatchGetCommand':
        reads += batchGetUnits(c.input);
        break;
      case 'TransactGetCommand':
        reads += 2 * transactItems(c.input);
        break;
      case 'PutCommand':
      case 'UpdateCommand':
      case 'DeleteCommand':
        writes += 1;
        break;
      case 'BatchWriteCommand':
        writes += batchWriteItems(c.input);
        break;
      case 'TransactWriteCommand':
        writes += 2 * transactItems(c.input);
        break;
      default:
        throw new Error(`no request-unit rule for ${c.name}`);
    }
  }
  return { reads, writes };
}

export interface CostRow {
  apiGateway: number;
  lambdaRequests: number;
  lambdaDuration: number;
  billedMs: number;
  dynamoReads: number;
  dynamoWrites: number;
  kms: number;
  total: number;
}

/** Dollars per million requests. */
export function costPerMillion(cpuMs: number, units: RequestUnits, kmsCallsPerRequest: number, p: typeof PRICES_US_EAST_1 = PRICES_US_EAST_1): CostRow {
  const billedMs = Math.max(BILLING_GRANULARITY_MS, Math.ceil(cpuMs / BILLING_GRANULARITY_MS) * BILLING_GRANULARITY_MS);
  const row = {
    apiGateway: p.apiGatewayHttpPerMillion,
    lambdaRequests: p.lambdaRequestsPerMillion,
    lambdaDuration: 1e6 * (billedMs / 1000) * (LAMBDA_MEMORY_MB / 1024) * p.lambdaArm64PerGbSecond,
    billedMs,
    dynamoReads: units.reads * p.dynamoReadRequestUnitPerMillion,
    dynamoWrites: units.writes * p.dynamoWriteRequestUnitPerMillion,
    kms: kmsCallsPerRequest * 100 * p.kmsPerTenThousand,
  };
  return { ...row, total: row.apiGateway + row.lambdaRequests + row.lambdaDuration + row.dynamoReads + row.dynamoWrites + row.kms };
}
