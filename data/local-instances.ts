import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import type { InstanceRecord } from './instances';
import * as keys from './keys';

/**
 * Every instance recorded `running` or `provisioning`, for the local stack's reconcile (its
 * processes die with the stack, its records do not). A Scan: local stack only, never a request
 * path; in AWS the ECS task state events keep the records true instead.
 */
export async function instancesRecordedLive(): Promise<InstanceRecord[]> {
  const found: InstanceRecord[] = [];
  const pages = paginateScan(
    { client: db() },
    {
      TableName: tableName(),
      FilterExpression: 'sk = :sk AND #status IN (:running, :provisioning)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':sk': keys.instanceSortKey, ':running': 'running', ':provisioning': 'provisioning' },
      ConsistentRead: true,
    },
  );
  for await (const page of pages) found.push(...((page.Items ?? []) as InstanceRecord[]));
  return found;
}
