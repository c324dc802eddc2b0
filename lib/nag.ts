import { Names, Token, Validations, type App, type CfnElement, type Stack } from 'aws-cdk-lib';
import type { CfnTable, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { CfnTaskDefinition } from 'aws-cdk-lib/aws-ecs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { Api } from './constructs/api';
import type { Compute } from './constructs/compute';
import type { Edge } from './constructs/edge';
import type { Functions } from './constructs/functions';
import type { Monitoring } from './constructs/monitoring';
import type { Queues } from './constructs/queues';
import type { Secrets } from './constructs/secrets';

/**
 * cdk-nag's AwsSolutions and Serverless packs run on every synthesis (`cdk synth`, `cdk deploy`,
 * test/infra/nag.test.ts) as CDK validation plugins: an unacknowledged finding fails the synthesis.
 */
export function addNagChecks(app: App) {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

export interface NagScope {
  api: Api;
  functions: Functions;
  compute: Compute;
  table: Table;
  queues: Queues;
  secrets: Secrets;
  monitoring: Monitoring;
  filesBucket: Bucket;
  edge: Edge;
}

/**
 * The findings the architecture accepts, each with its reason. cdk-nag 3 matches exact finding ids
 * (no prefixes), so a new kind of finding, or one on a construct not listed here, still fails.
 */
export function acknowledgeByDesign(stack: Stack, parts: NagScope) {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  // The functions' policies live in a nested stack, which sees the main stack's resources through
  // parameters CDK names `reference-to-<node unique id><attribute>` (cdk-nag prints them `<name>`).
  const nestedParameter = (construct: IConstruct | undefined, attribute: 'Arn' | 'Ref') =>
    `referenceto${Names.nodeUniqueId((construct as CfnElement).node)}${attribute}`;
  const tableArn = nestedParameter(parts.table.node.defaultChild as CfnTable, 'Arn');
  const clusterName = nestedParameter(parts.compute.cluster.node.defaultChild ?? undefined, 'Ref');
  const taskFamily = stack.resolve((parts.compute.taskDefinition.node.defaultChild as CfnTaskDefinition).family) as string | undefined;
  // cdk-nag writes an ARN part as `<AWS::Region>` when it is a token, as the value when the stack has an environment.
  const part = (value: string, pseudo: string) => (Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value);
  const arnPrefix = `arn:${part(stack.partition, 'Partition')}:%s:${part(stack.region, 'Region')}:${part(stack.account, 'AccountId')}`;
  const scoped = (service: string, resource: string) => `AwsSolutions-IAM5[Resource::${arnPrefix.replace('%s', service)}:${resource}]`;

  ack(
    parts.filesBucket,
    'AwsSolutions-S1',
    "Server access logs would be a second bucket of per-request records; the skills function's own logs record each file operation with the user.",
  );
  ack(
    parts.api,
    'AwsSolutions-APIG4',
    "Authorization is the request pipeline's in every function (session cookie, API key or gateway token, per route of the contract); public routes are public by the spec.",
  );
  ack(
    parts.functions,
    'AwsSolutions-L1',
    'Node 22 is the pinned runtime of the functions, the runtime image and the tests; a major upgrade is a deliberate change.',
  );
  ack(
    parts.functions,
    'Serverless-LambdaLatestVersion',
    'Node 22 is the pinned runtime of the functions, the runtime image and the tests; a major upgrade is a deliberate change.',
  );
  ack(
    parts.secrets.jwtSecret,
    'AwsSolutions-SMG4',
    'Rotating the session key signs every user out; it is rotated by a deliberate redeploy, not on a schedule.',
  );
  ack(
    parts.secrets.operatorSecret,
    'AwsSolutions-SMG4',
    'Third-party credentials written by the operator; they rotate at their issuer, which Secrets Manager cannot drive.',
  );

  ack(
    stack,
    'AwsSolutions-IAM5[Resource::*]',
    "Only actions IAM offers on '*' alone: X-Ray writes, VPC-attachment and task-definition describes, ECR auth token, RegisterTaskDefinition (lib/permissions.ts, checked by test/infra).",
  );
  ack(
    parts.functions,
    `AwsSolutions-IAM5[Resource::<${tableArn}>/index/*]`,
    "The table's own global secondary indexes (gsi1), for the queries the functions run.",
  );
  ack(
    parts.functions,
    `AwsSolutions-IAM5[Resource::<${nestedParameter(parts.filesBucket.node.defaultChild ?? undefined, 'Arn')}>/*]`,
    "The files bucket's objects: keys are `<userId>/<fileId>`, chosen per request; the function's code scopes each key to the caller.",
  );
  ack(
    parts.edge,
    `AwsSolutions-IAM5[Resource::<${tableArn}>/index/*]`,
    "The table's own global secondary indexes (gsi1): the edge looks an agent's subdomain up by index.",
  );
  ack(parts.edge.accessLogs, 'AwsSolutions-S1', "It is the load balancer's access log bucket: logging its own reads would log the logs.");
  ack(
    parts.edge,
    'AwsSolutions-EC23',
    'The agent edge is the public entry to every agent URL: its load balancer takes HTTPS (and the HTTP redirect) from anywhere.',
  );
  ack(
    parts.edge.taskDefinition,
    'AwsSolutions-ECS2',
    'Names and addresses only (table, domain, port, queue URL, key ARN); the edge holds no secret, tokens come encrypted from the table.',
  );
  for (const resource of ['network-interface/*', 'subnet/*', 'security-group/*']) {
    ack(
      parts.functions,
      scoped('ec2', resource),
      'Lambda VPC attachment creates network interfaces whose ids exist only at run time; kept to this account and region.',
    );
  }
  ack(parts.functions, scoped('ecs', `task/<${clusterName}>/*`), "Tasks of the platform's own cluster; their ids exist only after launch.");
  if (taskFamily)
    ack(
      parts.functions,
      scoped('ecs', `task-definition/${taskFamily}:*`),
      "Every revision of the platform's own task family: approved images register new revisions.",
    );

  const synchronous = [...parts.functions.byName].filter(([name]) => !parts.functions.asynchronous.has(name)).map(([, fn]) => fn);
  // The streaming twins are invoked synchronously too, through their Function URLs.
  for (const fn of [...synchronous, ...parts.functions.streaming.values()]) {
    ack(
      fn,
      'Serverless-LambdaDLQ',
      "Invoked synchronously (API Gateway) or by an SQS event source, whose failed records go to the queue's own dead-letter queue.",
    );
  }
  ack(
    parts.functions,
    'Serverless-LambdaEventSourceMappingDestination',
    "SQS event sources take no on-failure destination: failed records go to the queue's redrive dead-letter queue, which is alarmed.",
  );
  ack(
    parts.functions.asyncDeadLetters,
    'AwsSolutions-SQS3',
    "It is the functions' dead-letter queue; they name it through a nested stack parameter, which cdk-nag cannot follow.",
  );
  for (const deadLetters of [parts.queues.provisioning.deadLetterQueue, parts.queues.events.deadLetterQueue, parts.functions.asyncDeadLetters]) {
    ack(
      deadLetters,
      'Serverless-SQSRedrivePolicy',
      'A dead-letter queue is the end of the line: its messages are alarmed on (lib/constructs/monitoring.ts), not redriven further.',
    );
  }
  ack(
    parts.monitoring.topic,
    'Serverless-SNSRedrivePolicy',
    'Alarm notices only (mail, paging webhooks): SNS retries delivery, and every alarm also stays on the dashboard and in CloudWatch.',
  );
}
