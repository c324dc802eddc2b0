import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';

let documentClient: DynamoDBDocumentClient | undefined;

/** One client per container, created on first use so module init stays cheap. */
export function db(): DynamoDBDocumentClient {
  if (!documentClient) {
    const c = config();
    const base = new DynamoDBClient({
      region: c.region,
      endpoint: c.dynamoEndpoint,
      credentials: c.localCredentials,
      maxAttempts: 3,
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
