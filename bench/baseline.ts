import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The init baseline of docs/architecture.md §11: a bundle holding only the DynamoDB document client,
 * constructed at module scope, so a function's ratio shows what it adds on top of the SDK it needs.
 */
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
