import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { NEEDS } from '../../lib/permissions';
import { HEARTBEAT_TIMEOUT, HTTP_TIMEOUT, PROVISIONER_TIMEOUT, WORKERS } from '../../lib/constructs/functions';
import { MAX_RECEIVE_COUNT } from '../../lib/constructs/queues';
import { functionDescription } from '../../lib/constructs/platform-function';
import { PlatformStack, readSettings } from '../../lib/platform-stack';
import { allRoutes, contract, routeKey } from '../../shared/contract';
import { TABLE } from '../../shared/db/table';

type Json = Record<string, any>;

/** The operator defaults from cdk.json, so the tests see the stack an operator would deploy. */
const cdkContext: Record<string, unknown> = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;

function synth(context: Record<string, unknown> = {}) {
  // An empty bundling-stacks list skips esbuild: the tests read the template, not the bundles.
  const app = new App({ context: { ...cdkContext, ...context, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new PlatformStack(app, 'AgentPlatform'));
}

const template = synth();
const resources: Record<string, Json> = template.toJSON().Resources;

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const logicalIdOf = (type: string, predicate: (props: Json) => boolean) => {
  const found = ofType(type).filter(([, r]) => predicate(r.Properties ?? {}));
  expect(found, `exactly one ${type} matching`).toHaveLength(1);
  return found[0]![0];
};

const functionId = (name: string) => logicalIdOf('AWS::Lambda::Function', (p) => p.Description === functionDescription(name));
const functionProps = (name: string) => resources[functionId(name)]!.Properties as Json;
const roleIdOf = (fnName: string) => functionProps(fnName).Role['Fn::GetAtt'][0] as string;

const asArray = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  NotAction?: unknown;
}

/** Every statement granted to a role: its inline policies and the AWS::IAM::Policy resources attached to it. */
function statementsOfRole(roleId: string): Statement[] {
  const role = resources[roleId]!;
  expect(role.Type).toBe('AWS::IAM::Role');
  const inline = asArray<Json>(role.Properties.Policies).flatMap((p) => p.PolicyDocument.Statement);
  const attached = ofType('AWS::IAM::Policy')
    .filter(([, p]) => asArray<Json>(p.Properties.Roles).some((r) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
  return [...inline, ...attached];
}

const actionsOfRole = (roleId: string) => statementsOfRole(roleId).flatMap((s) => asArray(s.Action));

/** Every identity-policy statement in the template, wherever it is declared. */
function allIdentityStatements(): Statement[] {
  return [
    ...ofType('AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
    ...ofType('AWS::IAM::ManagedPolicy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
    ...ofType('AWS::IAM::Role').flatMap(([, r]) => asArray<Json>(r.Properties.Policies).flatMap((p) => p.PolicyDocument.Statement)),
  ];
}

const isReadOnly = (action: string) => /^[a-z0-9-]+:(Get|List|Describe)[A-Za-z]*$/.test(action);

describe('functions', () => {
  it('declares one function per contract group plus the three workers', () => {
    template.resourceCountIs('AWS::Lambda::Function', contract.length + WORKERS.length);
    for (const name of [...contract.map((g) => g.group), ...WORKERS]) functionId(name);
  });

  it('runs every function on Node 22, ARM64, 1024 MB, with its own one-month log group', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 1024, Handler: 'index.handler' });
      const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref;
      expect(resources[logGroupId]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
    }
  });

  it('gives HTTP functions 29 s and the workers their own timeouts', () => {
    for (const g of contract) expect(functionProps(g.group).Timeout).toBe(HTTP_TIMEOUT.toSeconds());
    expect(functionProps('provisioner').Timeout).toBe(PROVISIONER_TIMEOUT.toSeconds());
    expect(functionProps('heartbeat').Timeout).toBe(HEARTBEAT_TIMEOUT.toSeconds());
  });

  it('passes every setting shared/config.ts reads, and the JWT secret only as a dynamic reference', () => {
    const common = [
      'STAGE', 'TABLE_NAME', 'PROVISIONING_QUEUE_URL', 'EVENTS_QUEUE_URL', 'APP_URL', 'ADMIN_EMAILS', 'TESTER_EMAILS',
      'KMS_KEY_ID', 'ECS_CLUSTER_ARN', 'ECS_TASK_DEFINITION_ARN', 'ECS_SUBNET_IDS', 'ECS_SECURITY_GROUP_IDS',
      'RUNTIME_IMAGE', 'AGENT_DOMAIN', 'NODE_OPTIONS',
    ];
    for (const g of contract) {
      const env = functionProps(g.group).Environment.Variables;
      expect(Object.keys(env).sort()).toEqual([...common, 'JWT_SECRET'].sort());
      expect(env.STAGE).toBe('aws');
      expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
      expect(JSON.stringify(env.JWT_SECRET)).toMatch(/^\{"Fn::Join":\["",\["\{\{resolve:secretsmanager:",\{"Ref":"\w+"\},":SecretString:::\}\}"\]\]\}$/);
    }
    for (const w of WORKERS) expect(Object.keys(functionProps(w).Environment.Variables).sort()).toEqual([...common].sort());
  });

  it('takes operator settings from CDK context', () => {
    const custom = synth({ adminEmails: 'ops@example.com', appUrl: 'https://app.example.org', runtimeImage: 'example/runtime:1' });
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Description: functionDescription('accounts'),
      Environment: { Variables: Match.objectLike({ ADMIN_EMAILS: 'ops@example.com', APP_URL: 'https://app.example.org', RUNTIME_IMAGE: 'example/runtime:1' }) },
    });
    custom.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ Image: 'example/runtime:1' })],
    });
  });

  it('refuses bad or missing operator settings at synth', () => {
    const node = (context: Record<string, unknown>) => new App({ context: { ...cdkContext, ...context } }).node;
    expect(() => readSettings(node({ adminEmails: 'not-an-email' }))).toThrow(/adminEmails/);
    expect(() => readSettings(node({ appUrl: 'nope' }))).toThrow(/appUrl/);
    expect(() => readSettings(node({ runtimeImage: '' }))).toThrow(/runtimeImage/);
  });
});

describe('api', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');

  it('declares every contract route exactly once and nothing else', () => {
    const keys = routes.map(([, r]) => r.Properties.RouteKey as string);
    for (const route of allRoutes) {
      expect(keys.filter((k) => k === routeKey(route)), routeKey(route)).toHaveLength(1);
    }
    expect(routes).toHaveLength(allRoutes.length);
  });

  it('has no catch-all route', () => {
    for (const [, r] of routes) {
      expect(r.Properties.RouteKey).not.toContain('{proxy+}');
      expect(r.Properties.RouteKey).not.toBe('$default');
    }
  });

  it("sends each route to its own group's function", () => {
    const groupOfKey = new Map(allRoutes.map((r) => [routeKey(r), r.group]));
    for (const [, r] of routes) {
      const integrationId = r.Properties.Target['Fn::Join'][1][1].Ref as string;
      const uri = resources[integrationId]!.Properties.IntegrationUri;
      expect(uri).toEqual({ 'Fn::GetAtt': [functionId(groupOfKey.get(r.Properties.RouteKey)!), 'Arn'] });
    }
  });

  it('throttles the default stage and outputs the URL', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() },
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
    });
    template.hasOutput('ApiUrl', {});
  });
});

describe('data', () => {
  it('builds the table of shared/db/table.ts and keeps it', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes: TABLE.indexes.map((i) => ({
          IndexName: i.name,
          KeySchema: [
            { AttributeName: i.partitionKey, KeyType: 'HASH' },
            { AttributeName: i.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      },
    });
  });

  it('keeps a rotating KMS key and a generated 64-character JWT secret', () => {
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', Properties: { EnableKeyRotation: true } });
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 64 }),
      SecretString: Match.absent(),
    });
  });
});

describe('queues', () => {
  const queues = ofType('AWS::SQS::Queue');
  const mains = queues.filter(([, q]) => q.Properties.RedrivePolicy);

  it('gives the provisioning and events queues their own DLQ after 3 receives', () => {
    expect(queues).toHaveLength(4);
    expect(mains).toHaveLength(2);
    const dlqs = new Set<string>();
    for (const [, q] of mains) {
      const { deadLetterTargetArn, maxReceiveCount } = q.Properties.RedrivePolicy;
      expect(maxReceiveCount).toBe(MAX_RECEIVE_COUNT);
      const dlqId = deadLetterTargetArn['Fn::GetAtt'][0] as string;
      expect(deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [dlqId, 'Arn'] });
      expect(resources[dlqId]!.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      dlqs.add(dlqId);
    }
    expect(dlqs.size).toBe(2);
  });

  it('sizes the visibility timeout at six times the consumer timeout', () => {
    for (const [, q] of mains) expect(q.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * PROVISIONER_TIMEOUT.toSeconds());
  });

  it('refuses non-TLS access to every queue', () => {
    const policies = ofType('AWS::SQS::QueuePolicy');
    for (const [id] of queues) {
      const policy = policies.find(([, p]) => p.Properties.Queues.some((q: Json) => q.Ref === id));
      expect(policy, id).toBeDefined();
      expect(policy![1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });
});

describe('workers', () => {
  it('feeds the provisioner from the provisioning queue with partial batch responses', () => {
    const mapping = ofType('AWS::Lambda::EventSourceMapping');
    expect(mapping).toHaveLength(1);
    const props = mapping[0]![1].Properties;
    expect(props).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'], FunctionName: { Ref: functionId('provisioner') } });
    const queueId = props.EventSourceArn['Fn::GetAtt'][0] as string;
    expect(queueId).toMatch(/Provisioning/);
    expect(resources[queueId]!.Properties.RedrivePolicy).toBeDefined();
  });

  it('runs the heartbeat every 5 minutes', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('heartbeat'), 'Arn'] } })],
    });
  });

  it("sends the cluster's ECS task state changes to task-events", () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ecs'],
        'detail-type': ['ECS Task State Change'],
        detail: { clusterArn: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('Cluster'), 'Arn'] }] },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('task-events'), 'Arn'] } })],
    });
  });
});

describe('compute', () => {
  it('uses public subnets in two AZs and no NAT gateway', () => {
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    const subnets = ofType('AWS::EC2::Subnet');
    expect(subnets).toHaveLength(2);
    for (const [, s] of subnets) expect(s.Properties.MapPublicIpOnLaunch).toBe(true);
  });

  it('runs the runtime as an ARM64 Fargate task on port 8080 in a cluster with container insights', () => {
    template.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      Cpu: '512',
      Memory: '1024',
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          Image: cdkContext.runtimeImage,
          PortMappings: [Match.objectLike({ ContainerPort: 8080 })],
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
        }),
      ],
    });
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      SecurityGroupIngress: [Match.objectLike({ IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080 })],
    });
  });
});

describe('least privilege', () => {
  it('grants no wildcard action and no write on a wildcard resource, anywhere', () => {
    const statements = allIdentityStatements();
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(s.NotAction, JSON.stringify(s)).toBeUndefined();
      if (s.Effect !== 'Allow') continue;
      const actions = asArray(s.Action);
      for (const a of actions) expect(a, JSON.stringify(s)).not.toMatch(/^\*$|:\*$/);
      if (asArray(s.Resource).includes('*')) {
        for (const a of actions) expect(isReadOnly(a), `${a} on *`).toBe(true);
      }
    }
    for (const [, r] of ofType('AWS::IAM::Role')) {
      for (const arn of asArray<unknown>(r.Properties.ManagedPolicyArns)) expect(JSON.stringify(arn)).not.toMatch(/AdministratorAccess|FullAccess/);
    }
  });

  it('keeps the agent runtime away from the table and the platform secrets', () => {
    const taskDef = ofType('AWS::ECS::TaskDefinition')[0]![1].Properties;
    for (const roleRef of [taskDef.TaskRoleArn, taskDef.ExecutionRoleArn]) {
      const actions = actionsOfRole(roleRef['Fn::GetAtt'][0]);
      expect(actions.filter((a) => /^(dynamodb|secretsmanager|kms|sqs):/.test(a))).toEqual([]);
    }
    expect(actionsOfRole(taskDef.TaskRoleArn['Fn::GetAtt'][0])).toEqual([]);
    expect(JSON.stringify(taskDef.ContainerDefinitions)).not.toMatch(/secretsmanager|JWT_SECRET|TABLE_NAME/);
  });

  it('gives every function table data access and exactly the extras of the NEEDS table', () => {
    for (const name of [...contract.map((g) => g.group), ...WORKERS]) {
      const actions = actionsOfRole(roleIdOf(name));
      const needs = NEEDS[name] ?? [];
      expect(actions, name).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']));
      expect(actions.some((a) => a.startsWith('kms:')), `${name} kms`).toBe(needs.includes('dataKey'));
      expect(actions.includes('sqs:SendMessage'), `${name} sqs send`).toBe(needs.includes('sendProvisioning') || needs.includes('sendEvents'));
      expect(actions.some((a) => a.startsWith('ecs:')), `${name} ecs`).toBe(needs.includes('runTasks'));
      expect(actions.includes('iam:PassRole'), `${name} pass role`).toBe(needs.includes('runTasks'));
      expect(actions.filter((a) => a.startsWith('secretsmanager:')), name).toEqual([]);
      expect(actions.filter((a) => /^(dynamodb:(Create|Delete|Update)Table|dynamodb:\*)/.test(a)), name).toEqual([]);
    }
  });

  it('keeps memory off KMS and SQS while wallet can use the data key', () => {
    const memory = actionsOfRole(roleIdOf('memory'));
    expect(memory.filter((a) => a.startsWith('kms:') || a.startsWith('sqs:'))).toEqual([]);
    expect(actionsOfRole(roleIdOf('wallet'))).toEqual(expect.arrayContaining(['kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey']));
  });

  it('sends each enqueueing group to its own queue only', () => {
    const sendTargets = (name: string) =>
      statementsOfRole(roleIdOf(name))
        .filter((s) => asArray(s.Action).includes('sqs:SendMessage'))
        .map((s) => (s.Resource as Json)['Fn::GetAtt'][0] as string);
    for (const name of ['agents', 'provision', 'instance']) expect(sendTargets(name)).toEqual([expect.stringMatching(/Provisioning/)]);
    for (const name of ['accounts', 'settings']) expect(sendTargets(name)).toEqual([expect.stringMatching(/Events/)]);
  });

  it('scopes ECS rights to the platform task definition and cluster, and PassRole to its two roles', () => {
    const taskDefId = ofType('AWS::ECS::TaskDefinition')[0]![0];
    for (const name of ['provisioner', 'instance']) {
      const statements = statementsOfRole(roleIdOf(name));
      const runTask = statements.find((s) => asArray(s.Action).includes('ecs:RunTask'))!;
      expect(runTask.Resource).toEqual({ Ref: taskDefId });
      expect(runTask).toHaveProperty('Condition.ArnEquals.ecs:cluster');
      const stop = statements.find((s) => asArray(s.Action).includes('ecs:StopTask'))!;
      expect(JSON.stringify(stop.Resource)).toContain(':task/');
      const pass = statements.find((s) => asArray(s.Action).includes('iam:PassRole'))!;
      expect(asArray(pass.Resource)).toHaveLength(2);
      expect(pass).toHaveProperty(['Condition', 'StringEquals', 'iam:PassedToService'], 'ecs-tasks.amazonaws.com');
    }
  });
});
