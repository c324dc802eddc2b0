import { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Compute } from './constructs/compute';

/**
 * What every function may do on the table and its indexes: the item operations the data layer uses
 * (data: get, query, put, update, delete, batch write, transactions, which IAM checks per item).
 * Not CDK's readWriteData, which adds Scan (only the heartbeat's backfill scans: `scanTable`) and DescribeTable.
 */
export const TABLE_ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/** What a function may do beyond reading and writing the table's items, which every function does. */
export type Need =
  /** sqs:SendMessage on the provisioning queue (adapters/provisioning-queue.ts requestProvisioning). */
  | 'sendProvisioning'
  /** sqs:SendMessage on the events queue (adapters/events-queue.ts emitEvent). */
  | 'sendEvents'
  /** kms:GenerateDataKey and kms:Decrypt on the data key: envelope encryption (platform/crypto/envelope.ts). */
  | 'dataKey'
  /** ses:SendEmail / ses:SendRawEmail as the EMAIL_FROM identity (adapters/email.ts). */
  | 'sendEmail'
  /** dynamodb:DescribeTable on the table: GET /api/metrics reports its size. */
  | 'describeTable'
  /**
   * Launch instances (adapters/launcher-ecs.ts): RunTask and DescribeTasks in the cluster,
   * DescribeTaskDefinition + RegisterTaskDefinition (a revision per approved image), PassRole on the
   * task's two roles, and kms:Encrypt of the gateway token for the runtime's bootstrap only.
   */
  | 'launchTasks'
  /** ecs:StopTask in the cluster (a given-up launch, a stopped instance). */
  | 'stopTasks'
  /**
   * Talk to instances at their task's private IP on the runtime port (health, stats, config reload):
   * the function runs in the VPC with the security group the tasks admit (lib/constructs/compute.ts).
   */
  | 'reachInstances'
  /** Objects of the files bucket (adapters/file-storage-s3.ts): get, put (and copy), delete, list. */
  | 'fileBucket'
  /** logs:GetLogEvents on the runtime tasks' log group: the per-agent log (adapters/runtime-logs-cloudwatch.ts). */
  | 'readRuntimeLogs'
  /** dynamodb:Scan on the table (not its index): the bounded backfill of instances' subdomain look-ups (data/subdomain-lookups.ts). */
  | 'scanTable';

/**
 * The single table of extra rights, function name → needs, kept to what each function's code calls
 * (follow its imports: emitEvent, requestProvisioning, envelope encrypt/decrypt, sendEmail,
 * tableSizeBytes, launcher(), runtimeRequest). A function not listed gets table data access only.
 * test/infra/bundles.test.ts checks it against the code each function can load from its split bundle
 * (entry and chunks reachable by import()), so code a bundle merely carries earns no right.
 * Receive/delete rights on a queue come with the function's SQS event source, not from here.
 */
export const NEEDS: Readonly<Record<string, readonly Need[]>> = {
  // A password reset, a password change and sign-out everywhere rotate the instance's gateway token.
  accounts: ['dataKey', 'reachInstances', 'sendEvents', 'sendEmail'],
  // A first OAuth or wallet sign-in creates the account and emits user.created.
  'oauth-sign-in': ['sendEvents'],
  'wallet-sign-in': ['sendEvents'],
  settings: ['dataKey', 'reachInstances', 'sendEvents', 'sendEmail', 'sendProvisioning'],
  social: ['sendEvents'],
  agents: ['sendProvisioning', 'dataKey', 'reachInstances'],
  'agent-logs': ['readRuntimeLogs'],
  // Budgets: raising a cap resumes a paused instance; the caps' alerts are queued on the events queue.
  // Checkpoints keep their snapshot in the files bucket, and a rewind has the running instance reload.
  'agent-autonomy': ['sendProvisioning', 'sendEvents', 'dataKey', 'fileBucket', 'reachInstances'],
  provision: ['sendProvisioning', 'dataKey'],
  // reset-memory and update take each agent's automatic checkpoint (files bucket) first.
  instance: ['sendProvisioning', 'dataKey', 'reachInstances', 'sendEvents', 'sendEmail', 'fileBucket'],
  wallet: ['dataKey'],
  // The spending caps' actions pause an instance, with its lifecycle event.
  billing: ['dataKey', 'sendEvents'],
  // A card event that leaves no subscription in force stops the owner's instance, with its lifecycle event.
  card: ['sendEvents', 'sendProvisioning'],
  metrics: ['describeTable'],
  // Lifecycle events are stored and queued wherever an instance changes; account deletion runs in the provisioner
  // and removes the account's file-manager objects.
  provisioner: ['dataKey', 'launchTasks', 'stopTasks', 'reachInstances', 'sendEvents', 'sendEmail', 'sendProvisioning', 'fileBucket'],
  'provisioner-dlq': ['stopTasks', 'sendEvents', 'sendProvisioning'],
  // Both relaunch or re-drive work through the provisioning queue.
  // The 5-minute sweep also backfills the subdomain look-ups of instances from before the edge (a bounded Scan).
  heartbeat: ['dataKey', 'reachInstances', 'sendEvents', 'sendProvisioning', 'scanTable'],
  'task-events': ['dataKey', 'reachInstances', 'sendEvents', 'sendProvisioning', 'sendEmail'],
  // dj-streaming seals a stream key; event-ticketing emails confirmations; installs reload the runtime.
  // file-manager keeps file bytes in the files bucket.
  skills: ['dataKey', 'reachInstances', 'sendEmail', 'sendEvents', 'fileBucket', 'sendProvisioning'],
  // User endpoints' signing secrets are envelope-encrypted.
  // Retries and redeliveries are queued on the events queue; a disabled endpoint's owner is mailed, as are the emails other functions queue there.
  'webhook-delivery': ['dataKey', 'sendEvents', 'sendEmail'],
  webhooks: ['dataKey', 'sendEvents'],
  // The model layer decrypts a user's own provider key (BYOK); agent chat reaches the running instance.
  // Every metered call runs the spending caps' kill switch: events, stopping the instance,
  // and alert emails queued on the events queue for webhook-delivery to send (no SES right here).
  ai: ['dataKey', 'sendEvents', 'sendProvisioning'],
  gateway: ['dataKey', 'sendEvents', 'sendProvisioning'],
  'runtime-model': ['dataKey', 'sendEvents', 'sendProvisioning'],
  // A chat to an idle-stopped agent wakes it through the provisioning queue.
  'agent-chat': ['dataKey', 'reachInstances', 'sendEvents', 'sendProvisioning'],
  // The OpenAI-compatible API: the model layer as `ai` has it, and an agent model's chat as agent-chat has it.
  'openai-compatible': ['dataKey', 'reachInstances', 'sendEvents', 'sendProvisioning'],
  // A memory write is pushed to the running instance with its (decrypted) gateway token; a bulk write takes an automatic checkpoint first.
  memory: ['dataKey', 'reachInstances', 'fileBucket'],
  // A new API key kept for Idempotency-Key replay is sealed with the data key (http/steps/idempotency.ts).
  keys: ['dataKey'],
};

export const needsOf = (name: string): readonly Need[] => NEEDS[name] ?? [];

/**
 * The encryption-context purpose under which the provisioner encrypts an instance's gateway token and
 * the runtime decrypts it (BOOTSTRAP_PURPOSE in adapters/launcher-ecs.ts, runtime/server.ts;
 * an infra test checks they agree). Not imported: that module would load the ECS client into synth.
 */
export const BOOTSTRAP_PURPOSE = 'runtime-bootstrap';

/**
 * The envelope purpose of an instance's gateway token (TOKEN_PURPOSE in data/instances.ts; an infra
 * test checks they agree): the agent edge may open that envelope and no other under the data key.
 */
export const GATEWAY_TOKEN_PURPOSE = 'gateway-token';

/**
 * What the agent edge's tasks may do (lib/constructs/edge.ts): read and write the table's items
 * (routing reads the instance record; a wake writes its state), decrypt gateway tokens only (to check
 * the token a request carries), and queue a wake on the provisioning queue. No other key use, no
 * other queue, no ECS, no secret.
 */
export function grantEdge(edge: IGrantable, t: Pick<GrantTargets, 'table' | 'provisioningQueue' | 'eventsQueue' | 'dataKey'>) {
  t.table.grants.actions(edge, ...TABLE_ITEM_ACTIONS);
  t.provisioningQueue.grants.actions(edge, ['sqs:SendMessage']);
  t.eventsQueue.grants.actions(edge, ['sqs:SendMessage']);
  edge.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [t.dataKey.keyArn],
      conditions: { StringEquals: { 'kms:EncryptionContext:purpose': GATEWAY_TOKEN_PURPOSE } },
    }),
  );
}

/**
 * The only grants on Resource '*', each because the action has no resource-level permission in IAM.
 * The least-privilege test allows exactly these.
 */
export const WILDCARD_RESOURCE_ACTIONS = [
  // Registers a revision of the platform's family for an approved image; IAM cannot scope it.
  'ecs:RegisterTaskDefinition',
  // Read-only, and only grantable on '*'.
  'ecs:DescribeTaskDefinition',
  // Lambda's VPC attachment (lib/constructs/platform-function.ts): only grantable on '*'.
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  // Active tracing: X-Ray accepts trace data only on '*'.
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
] as const;

export interface GrantTargets {
  table: Table;
  provisioningQueue: Queue;
  eventsQueue: Queue;
  dataKey: Key;
  compute: Compute;
  /** SES identities EMAIL_FROM may send as. */
  emailIdentityArns: string[];
  filesBucket: IBucket;
}

/** Applies the table to the functions; an entry naming no function is a mistake, so it throws. */
export function applyGrants(functions: ReadonlyMap<string, IFunction>, targets: GrantTargets) {
  for (const name of Object.keys(NEEDS)) {
    if (!functions.has(name)) throw new Error(`permissions table names an unknown function: ${name}`);
  }
  for (const [name, fn] of functions) grantNeedsOf(name, fn, targets);
}

/** What the function `name` may do, granted to `fn` (also a second function serving the same group). */
export function grantNeedsOf(name: string, fn: IFunction, targets: GrantTargets) {
  targets.table.grants.actions(fn, ...TABLE_ITEM_ACTIONS);
  for (const need of needsOf(name)) grant(need, fn, targets);
}

function grant(need: Need, fn: IFunction, t: GrantTargets) {
  const { cluster, taskDefinition } = t.compute;
  const inCluster = { ArnEquals: { 'ecs:cluster': cluster.clusterArn } };
  const allow = (actions: string[], resources: string[], conditions?: Record<string, unknown>) =>
    fn.addToRolePolicy(new PolicyStatement({ actions, resources, conditions }));
  switch (need) {
    case 'sendProvisioning':
      t.provisioningQueue.grants.actions(fn, ['sqs:SendMessage']);
      return;
    case 'sendEvents':
      t.eventsQueue.grants.actions(fn, ['sqs:SendMessage']);
      return;
    case 'dataKey':
      // Encrypt is not needed: envelope.ts wraps with GenerateDataKey and unwraps with Decrypt.
      t.dataKey.grants.actions(fn, 'kms:GenerateDataKey', 'kms:Decrypt');
      return;
    case 'sendEmail':
      allow(['ses:SendEmail', 'ses:SendRawEmail'], t.emailIdentityArns);
      return;
    case 'describeTable':
      allow(['dynamodb:DescribeTable'], [t.table.tableArn]);
      return;
    case 'scanTable':
      allow(['dynamodb:Scan'], [t.table.tableArn]);
      return;
    case 'launchTasks': {
      const stack = Stack.of(cluster);
      // Every revision of the platform's family: the base one and those registered for approved images.
      const family = stack.formatArn({ service: 'ecs', resource: 'task-definition', resourceName: `${taskDefinition.family}:*` });
      allow(['ecs:RunTask'], [family], inCluster);
      allow(['ecs:DescribeTasks'], [tasksOf(cluster)], inCluster);
      allow(['ecs:DescribeTaskDefinition', 'ecs:RegisterTaskDefinition'], ['*']);
      allow(['iam:PassRole'], t.compute.passableRoleArns(), { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
      allow(['kms:Encrypt'], [t.dataKey.keyArn], { StringEquals: { 'kms:EncryptionContext:purpose': BOOTSTRAP_PURPOSE } });
      return;
    }
    case 'stopTasks':
      allow(['ecs:StopTask'], [tasksOf(cluster)], inCluster);
      return;
    case 'fileBucket':
      allow(['s3:GetObject', 's3:PutObject', 's3:DeleteObject'], [t.filesBucket.arnForObjects('*')]);
      allow(['s3:ListBucket'], [t.filesBucket.bucketArn]);
      return;
    case 'readRuntimeLogs':
      // The group's ARN ends in `:*`, which covers its streams (GetLogEvents is authorised on the stream).
      allow(['logs:GetLogEvents'], [t.compute.runtimeLogGroup.logGroupArn]);
      return;
    case 'reachInstances':
      // Placement, not a grant: lib/platform-stack.ts puts these functions in the VPC (networkOf).
      return;
  }
}

const tasksOf = (cluster: Compute['cluster']) => Stack.of(cluster).formatArn({ service: 'ecs', resource: 'task', resourceName: `${cluster.clusterName}/*` });
