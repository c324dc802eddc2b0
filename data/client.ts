import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#platform/config';

let documentClient: DynamoDBDocumentClient | undefined;

/** One client per container, created on first use so module init stays cheap. */
export function db(): DynamoDBDocumentClient {
  if (!documentClient) {
    const c = config();
    const base = new DynamoDBClient({
      region: c.region,
      endpoint: c.dynamoEndpoint,
      credentials: c.localCredentials,
      maxAttempts: c.dynamoBudget.maxAttempts,
      // Without throwOnRequestTimeout the handler only logs a warning when a request exceeds its timeout.
      requestHandler: { connectionTimeout: c.dynamoBudget.connectTimeoutMs, requestTimeout: c.dynamoBudget.requestTimeoutMs, throwOnRequestTimeout: true },
    });
    documentClient = DynamoDBDocumentClient.from(base, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return documentClient;
}

/** The local stack and tests point the client at a new endpoint after reloading the config. */
export function resetDbClient(): void {
  documentClient?.destroy();
  documentClient = undefined;
}

export const tableName = () => config().tableName;

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * A call that failed because the table could not be reached in time (a timeout, a refused or
 * dropped connection, throttling that outlived the retries), as opposed to a bad request or a
 * lost condition: the caller may retry later, so it is answered 503, not 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout' || e.name === 'AbortError') return true;
  if (e.name === 'ProvisionedThroughputExceededException' || e.name === 'ThrottlingException' || e.name === 'RequestLimitExceeded') return true;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  if (e.name === 'InternalServerError' || e.name === 'ServiceUnavailable' || (e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  return false;
}
