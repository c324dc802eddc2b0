import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { HTTP_TIMEOUT, WORKERS, WORKER_NAMES } from '#lib/constructs/functions';
import { MAX_RECEIVE_COUNT } from '#lib/constructs/queues';
import { functionDescription, streamingFunctionDescription } from '#lib/constructs/platform-function';
import { NEEDS, needsOf, TABLE_ITEM_ACTIONS, WILDCARD_RESOURCE_ACTIONS, type Need } from '#lib/permissions';
import { readSettings } from '#lib/platform-stack';
import { BOOTSTRAP_PURPOSE } from '#adapters/launcher-ecs';
import { RUNTIME_CONTAINER_NAME, RUNTIME_LOG_STREAM_PREFIX } from '#adapters/runtime-logs-cloudwatch';
import { allRoutes, contract, routeKey } from '#contract';
import { TABLE } from '#data/table';
import statefulLogicalIds from './fixtures/stateful-logical-ids.json' with { type: 'json' };
import { asArray, cdkContext, inspect, nestedStacksOf, synth, synthStack, testApp, type Json } from './synth';

const { template, mainTemplate, dockerImages, stack } = synthStack();
const t = inspect(template);
const { resources, ofType, functionId, functionProps, environmentOf, statementsOf, statementsWith, actionsOf, actionsOfRole, roleIdOf } = t;

const httpNames = contract.map((g) => g.group);
const streamingGroups = contract.filter((g) => g.streams).map((g) => g.group);
const streamingId = (group: string) => t.logicalIdOf('AWS::Lambda::Function', (p) => p.Description === streamingFunctionDescription(group));
const allNames = [...httpNames, ...WORKER_NAMES];
const isReadOnly = (action: string) => /^[a-z0-9-]+:(Get|List|Describe)[A-Za-z]*$/.test(action);
const has = (name: string, need: Need) => needsOf(name).includes(need);
const refId = (value: Json) => (value['Fn::GetAtt'] ?? [value.Ref])[0] as string;

describe('functions', () => {
  it('declares one function per contract group plus every worker', () => {
    template.resourceCountIs('AWS::Lambda::Function', contract.length + WORKERS.length + streamingGroups.length);
    expect(WORKER_NAMES).toEqual(['provisioner', 'provisioner-dlq', 'heartbeat', 'task-events', 'webhook-delivery']);
    for (const name of allNames) functionId(name);
  });

  it('runs every function on Node 22, ARM64, 1024 MB, with its own one-month log group', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 1024 });
      const logGroupId = fn.Properties.LoggingConfig.LogGroup.Ref;
      expect(resources[logGroupId]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
    }
  });

  it("calls each function's handler export: dlqHandler for the provisioner's DLQ consumer", () => {
    for (const name of allNames) expect(functionProps(name).Handler, name).toBe(name === 'provisioner-dlq' ? 'index.dlqHandler' : 'index.handler');
    expect(WORKERS.find((w) => w.name === 'provisioner-dlq')).toMatchObject({ folder: 'provisioner', handlerExport: 'dlqHandler' });
  });

  it('gives HTTP functions 29 s and each worker its own timeout', () => {
    for (const g of contract) expect(functionProps(g.group).Timeout).toBe(HTTP_TIMEOUT.toSeconds());
    for (const w of WORKERS) expect(functionProps(w.name).Timeout, w.name).toBe(w.timeout.toSeconds());
    expect(functionProps('webhook-delivery').Timeout).toBe(60);
  });

  it('gives every function the common settings, the JWT secret to HTTP functions only, as a dynamic reference', () => {
    const common = ['STAGE', 'TABLE_NAME', 'APP_URL', 'ADMIN_EMAILS', 'TESTER_EMAILS', 'RUNTIME_IMAGE', 'AGENT_DOMAIN', 'NODE_OPTIONS'];
    for (const name of allNames) {
      const env = environmentOf(name);
      expect(Object.keys(env), name).toEqual(expect.arrayContaining(common));
      expect(env.STAGE).toBe('aws');
      expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
      expect('JWT_SECRET' in env, name).toBe(httpNames.includes(name));
      if (env.JWT_SECRET) {
        expect(JSON.stringify(env.JWT_SECRET)).toMatch(/^\{"Fn::Join":\["",\["\{\{resolve:secretsmanager:",\{"Ref":"\w+"\},":SecretString:::\}\}"\]\]\}$/);
      }
    }
  });

  it('hands each resource address only to the functions granted its use', () => {
    const expectations: [string, (name: string) => boolean][] = [
      ['PROVISIONING_QUEUE_URL', (n) => has(n, 'sendProvisioning')],
      ['EVENTS_QUEUE_URL', (n) => has(n, 'sendEvents')],
      ['KMS_KEY_ID', (n) => has(n, 'dataKey') || has(n, 'launchTasks')],
      ['ECS_TASK_DEFINITION_ARN', (n) => has(n, 'launchTasks')],
      ['ECS_SUBNET_IDS', (n) => has(n, 'launchTasks')],
      ['ECS_SECURITY_GROUP_IDS', (n) => has(n, 'launchTasks')],
      ['ECS_CLUSTER_ARN', (n) => has(n, 'launchTasks') || has(n, 'stopTasks')],
      ['RUNTIME_LOG_GROUP', (n) => has(n, 'readRuntimeLogs')],
    ];
    for (const name of allNames) {
      const env = environmentOf(name);
      for (const [key, expected] of expectations) expect(key in env, `${name} ${key}`).toBe(expected(name));
    }
  });

  it('gives the provisioner everything the ECS launcher reads, and the API URL for the runtimes', () => {
    const env = environmentOf('provisioner');
    const api = ofType('AWS::ApiGatewayV2::Api')[0]![0];
    expect(JSON.stringify(env.RUNTIME_PLATFORM_URL)).toContain(api);
    expect(env.ECS_TASK_DEFINITION_ARN).toEqual({ Ref: ofType('AWS::ECS::TaskDefinition')[0]![0] });
    const publicSubnets = ofType('AWS::EC2::Subnet')
      .filter(([, s]) => s.Properties.MapPublicIpOnLaunch)
      .map(([id]) => ({ Ref: id }));
    expect(env.ECS_SUBNET_IDS['Fn::Join'][1].filter((p: unknown) => p !== ',')).toEqual(publicSubnets);
    expect(env.ECS_SECURITY_GROUP_IDS).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/RuntimeSecurityGroup/), 'GroupId'] });
  });

  it('takes operator settings from CDK context', () => {
    const { template: custom, dockerImages: customImages } = synthStack({
      adminEmails: 'ops@example.com',
      appUrl: 'https://app.example.org',
      runtimeImage: 'example/runtime:1',
    });
    // An operator's runtimeImage replaces the image asset: nothing is built.
    expect(customImages).toEqual([]);
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Description: functionDescription('accounts'),
      Environment: { Variables: Match.objectLike({ ADMIN_EMAILS: 'ops@example.com', APP_URL: 'https://app.example.org', RUNTIME_IMAGE: 'example/runtime:1' }) },
    });
    custom.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ Image: 'example/runtime:1' })],
    });
    // A second synth of the whole stack, with the streaming twins: slow on a loaded machine.
  }, 90_000);

  it('refuses bad or missing stack settings at synth', () => {
    const node = (context: Record<string, unknown>) => testApp({ ...cdkContext, ...context }).node;
    expect(() => readSettings(node({ adminEmails: 'not-an-email' }))).toThrow(/adminEmails/);
    expect(() => readSettings(node({ appUrl: 'nope' }))).toThrow(/appUrl/);
    expect(() => readSettings(node({ runtimeImage: 42 }))).toThrow(/runtimeImage/);
    expect(() => readSettings(node({ natGateways: 0 }))).toThrow(/natGateways/);
    expect(() => readSettings(node({ awsInterfaceEndpoints: 'yes' }))).toThrow(/awsInterfaceEndpoints/);
    expect(() => readSettings(node({ emailIdentityArn: 'arn:aws:s3:::bucket' }))).toThrow(/emailIdentityArn/);
    expect(readSettings(node({ natGateways: '2', awsInterfaceEndpoints: 'true' }))).toMatchObject({ natGateways: 2, awsInterfaceEndpoints: true });
  });
});

describe('api', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');

  it('declares every contract route exactly once and nothing else', () => {
    const keys = routes.map(([, r]) => r.Properties.RouteKey as string);
    for (const route of allRoutes) {
      expect(
        keys.filter((k) => k === routeKey(route)),
        routeKey(route),
      ).toHaveLength(1);
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

describe('response streaming', () => {
  it('marks exactly the agent-chat, ai and gateway groups as streaming', () => {
    expect(streamingGroups.sort()).toEqual(['agent-chat', 'ai', 'gateway']);
  });

  it('gives each streaming group a twin at its streamHandler export, with the same settings and role rights', () => {
    for (const group of streamingGroups) {
      const twin = resources[streamingId(group)]!.Properties;
      expect(twin.Handler).toBe('index.streamHandler');
      expect(twin.Timeout).toBe(HTTP_TIMEOUT.toSeconds());
      expect(twin.Environment.Variables).toEqual(environmentOf(group));
      const twinActions = actionsOfRole(twin.Role['Fn::GetAtt'][0]).sort();
      expect(twinActions).toEqual(actionsOfRole(roleIdOf(group)).sort());
    }
  });

  it('puts a Function URL in RESPONSE_STREAM mode on the streaming twins only, and outputs each URL', () => {
    const urls = ofType('AWS::Lambda::Url');
    expect(urls).toHaveLength(streamingGroups.length);
    const targets = urls.map(([, u]) => refId(u.Properties.TargetFunctionArn));
    expect(targets.sort()).toEqual(streamingGroups.map(streamingId).sort());
    for (const [, u] of urls) expect(u.Properties).toMatchObject({ AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' });
    for (const group of httpNames) expect(targets).not.toContain(functionId(group));
    template.hasOutput('AiStreamingUrl', { Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^AiStreaming'), 'FunctionUrl'] } });
    template.hasOutput('GatewayStreamingUrl', { Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^GatewayStreaming'), 'FunctionUrl'] } });
  });
});

describe('data', () => {
  it('builds the table of data/table.ts and keeps it', () => {
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

  it("keeps file-manager's files in a private, encrypted, TLS-only bucket that drops abandoned uploads", () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ Prefix: 'pending/', ExpirationInDays: 1, Status: 'Enabled' }),
            Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
          ]),
        },
      },
    });
    const [bucketId] = ofType('AWS::S3::Bucket')[0]!;
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    // Its name, and rights on its objects, go to the functions granted the bucket only (skills).
    for (const name of allNames) {
      const env = environmentOf(name);
      expect('FILES_BUCKET' in env, name).toBe(has(name, 'fileBucket'));
      if (has(name, 'fileBucket')) {
        expect(env.FILES_BUCKET).toEqual({ Ref: bucketId });
        expect(env.FILE_STORAGE).toBe('s3');
      }
      const s3Actions = actionsOf(name).filter((a) => a.startsWith('s3:'));
      expect(s3Actions.sort(), name).toEqual(has(name, 'fileBucket') ? ['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject'] : []);
    }
    expect(has('skills', 'fileBucket')).toBe(true);
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
    // The two work queues, their DLQs, and the dead-letter queue of failed asynchronous invocations.
    expect(queues).toHaveLength(5);
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

  it("sizes every consumed queue's visibility timeout at six times its consumer's timeout or more", () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings.length).toBeGreaterThan(0);
    for (const [, m] of mappings) {
      const queue = resources[refId(m.Properties.EventSourceArn)]!;
      const consumer = resources[m.Properties.FunctionName.Ref]!;
      expect(queue.Properties.VisibilityTimeout, consumer.Properties.Description).toBeGreaterThanOrEqual(6 * consumer.Properties.Timeout);
    }
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
  const mappings = ofType('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties as Json);
  const mappingOf = (name: string) => {
    const found = mappings.filter((m) => m.FunctionName.Ref === functionId(name));
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const queueIds = () => {
    const mains = ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.RedrivePolicy);
    const byName = (re: RegExp) => mains.find(([id]) => re.test(id))!;
    const [provisioning, provisioningQueue] = byName(/Provisioning/);
    const [events, eventsQueue] = byName(/Events/);
    return {
      provisioning,
      provisioningDlq: refId(provisioningQueue.Properties.RedrivePolicy.deadLetterTargetArn),
      events,
      eventsDlq: refId(eventsQueue.Properties.RedrivePolicy.deadLetterTargetArn),
    };
  };

  it('has exactly three SQS event sources, all with batches of 10 and partial batch responses', () => {
    expect(mappings).toHaveLength(3);
    for (const m of mappings) expect(m).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });

  it('feeds the provisioner from the provisioning queue', () => {
    expect(refId(mappingOf('provisioner').EventSourceArn)).toBe(queueIds().provisioning);
  });

  it("feeds provisioner-dlq from the provisioning queue's dead-letter queue", () => {
    const { provisioningDlq } = queueIds();
    expect(refId(mappingOf('provisioner-dlq').EventSourceArn)).toBe(provisioningDlq);
    // The DLQ is consumed, so it is sized for its consumer like a work queue.
    expect(resources[provisioningDlq]!.Properties.VisibilityTimeout).toBe(6 * functionProps('provisioner-dlq').Timeout);
  });

  it('feeds webhook-delivery from the events queue, sized for its 60 s timeout', () => {
    const { events, eventsDlq } = queueIds();
    expect(refId(mappingOf('webhook-delivery').EventSourceArn)).toBe(events);
    expect(resources[events]!.Properties.VisibilityTimeout).toBe(360);
    expect(mappings.some((m) => refId(m.EventSourceArn) === eventsDlq)).toBe(false);
  });

  it('lets each consumer receive and delete only on its own queue', () => {
    const { provisioning, provisioningDlq, events } = queueIds();
    const receiveTargets = (name: string) => statementsWith(name, 'sqs:ReceiveMessage').map((s) => refId(s.Resource as Json));
    expect(receiveTargets('provisioner')).toEqual([provisioning]);
    expect(receiveTargets('provisioner-dlq')).toEqual([provisioningDlq]);
    expect(receiveTargets('webhook-delivery')).toEqual([events]);
    for (const name of allNames.filter((n) => !['provisioner', 'provisioner-dlq', 'webhook-delivery'].includes(n))) {
      expect(receiveTargets(name), name).toEqual([]);
    }
  });

  it('runs the heartbeat checks every 5 minutes and the schedule / idle sweep every minute', () => {
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter((r) => r.Properties.ScheduleExpression);
    const sweeps = rules.map((r) => ({
      rate: r.Properties.ScheduleExpression,
      target: r.Properties.Targets[0].Arn['Fn::GetAtt'][0],
      input: JSON.parse(r.Properties.Targets[0].Input),
    }));
    expect(sweeps).toEqual(
      expect.arrayContaining([
        { rate: 'rate(5 minutes)', target: functionId('heartbeat'), input: { sweep: 'five-minute' } },
        { rate: 'cron(* * * * ? *)', target: functionId('heartbeat'), input: { sweep: 'minute' } },
      ]),
    );
    expect(sweeps).toHaveLength(2);
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

describe('compute and network', () => {
  const subnets = ofType('AWS::EC2::Subnet');
  const publicSubnets = subnets.filter(([, s]) => s.Properties.MapPublicIpOnLaunch).map(([id]) => id);
  const privateSubnets = subnets.filter(([, s]) => !s.Properties.MapPublicIpOnLaunch).map(([id]) => id);
  const functionsSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent platform functions/.test(p.GroupDescription));
  const runtimeSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent runtime tasks/.test(p.GroupDescription));

  it('has public subnets for the tasks and private ones for the functions in two AZs, with one NAT gateway', () => {
    expect(publicSubnets).toHaveLength(2);
    expect(privateSubnets).toHaveLength(2);
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    for (const id of privateSubnets) {
      const table = ofType('AWS::EC2::SubnetRouteTableAssociation').find(([, a]) => a.Properties.SubnetId.Ref === id)![1].Properties.RouteTableId.Ref;
      template.hasResourceProperties('AWS::EC2::Route', { RouteTableId: { Ref: table }, DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: Match.anyValue() });
    }
  });

  it('routes DynamoDB through a free gateway endpoint and adds no interface endpoint by default', () => {
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('dynamodb')])] }),
    });
    expect(ofType('AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface')).toEqual([]);
  });

  it('adds SQS, KMS and ECS interface endpoints, reachable from the functions only, when asked, and a NAT per AZ', () => {
    const custom = inspect(synth({ awsInterfaceEndpoints: true, natGateways: 2 }));
    const endpoints = custom.ofType('AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface');
    expect(endpoints.map(([, e]) => JSON.stringify(e.Properties.ServiceName).match(/\.(sqs|kms|ecs)"/)?.[1]).sort()).toEqual(['ecs', 'kms', 'sqs']);
    const customFunctionsSg = custom.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent platform functions/.test(p.GroupDescription));
    for (const [, e] of endpoints) {
      expect(e.Properties.PrivateDnsEnabled).toBe(true);
      const sg = custom.resources[e.Properties.SecurityGroupIds[0]['Fn::GetAtt'][0]]!;
      expect(sg.Properties.SecurityGroupIngress ?? []).toEqual([]);
      const ingress = custom
        .ofType('AWS::EC2::SecurityGroupIngress')
        .filter(([, i]) => i.Properties.GroupId['Fn::GetAtt'][0] === e.Properties.SecurityGroupIds[0]['Fn::GetAtt'][0]);
      expect(ingress.map(([, i]) => [i.Properties.FromPort, i.Properties.SourceSecurityGroupId['Fn::GetAtt'][0]])).toEqual([[443, customFunctionsSg]]);
    }
    expect(custom.ofType('AWS::EC2::NatGateway')).toHaveLength(2);
  });

  it('puts exactly the functions that talk to instances in the private subnets, behind the functions security group', () => {
    const inVpc = allNames.filter((n) => functionProps(n).VpcConfig);
    expect(inVpc.sort()).toEqual(allNames.filter((n) => has(n, 'reachInstances')).sort());
    // memory pushes writes to the running agent at once.
    expect(inVpc.sort()).toEqual(['accounts', 'agent-chat', 'agents', 'heartbeat', 'instance', 'memory', 'provisioner', 'settings', 'skills', 'task-events']);
    for (const name of inVpc) {
      const vpc = functionProps(name).VpcConfig;
      expect(vpc.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [functionsSg, 'GroupId'] }]);
      expect(vpc.SubnetIds.map((s: Json) => s.Ref).sort()).toEqual([...privateSubnets].sort());
    }
  });

  it('admits the runtime port from the functions security group only, never from the internet', () => {
    const inline = asArray<Json>(resources[runtimeSg]!.Properties.SecurityGroupIngress);
    expect(inline).toEqual([]);
    const rules = ofType('AWS::EC2::SecurityGroupIngress').filter(([, r]) => r.Properties.GroupId['Fn::GetAtt'][0] === runtimeSg);
    expect(rules.map(([, r]) => r.Properties)).toEqual([
      expect.objectContaining({ IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080, SourceSecurityGroupId: { 'Fn::GetAtt': [functionsSg, 'GroupId'] } }),
    ]);
    for (const [, sg] of ofType('AWS::EC2::SecurityGroup')) {
      for (const rule of asArray<Json>(sg.Properties.SecurityGroupIngress)) {
        expect(rule.CidrIp, JSON.stringify(rule)).not.toBe('0.0.0.0/0');
        expect(rule.CidrIpv6, JSON.stringify(rule)).not.toBe('::/0');
      }
    }
  });

  it('lets the VPC functions manage their network interfaces without a write on *', () => {
    for (const name of allNames) {
      const statements = statementsOf(name);
      const create = statements.filter((s) => asArray(s.Action).includes('ec2:CreateNetworkInterface'));
      expect(create.length > 0, name).toBe(has(name, 'reachInstances'));
      for (const s of create) expect(JSON.stringify(s.Resource)).not.toMatch(/"\*"/);
    }
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
          PortMappings: [Match.objectLike({ ContainerPort: 8080 })],
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
        }),
      ],
    });
  });
});

describe('runtime image', () => {
  it('is runtime/Dockerfile built by CDK as an ARM64 image asset, run by the task definition by default', () => {
    expect(cdkContext.runtimeImage).toBe('');
    expect(dockerImages).toHaveLength(1);
    const asset = dockerImages[0]!;
    expect(asset.source).toMatchObject({ dockerFile: 'runtime/Dockerfile', platform: 'linux/arm64' });
    const destination = Object.values(asset.destinations)[0]!;
    const [, taskDef] = ofType('AWS::ECS::TaskDefinition')[0]!;
    const image = taskDef.Properties.ContainerDefinitions[0].Image;
    expect(image).toEqual({ 'Fn::Sub': `\${AWS::AccountId}.dkr.ecr.\${AWS::Region}.\${AWS::URLSuffix}/${destination.repositoryName}:${destination.imageTag}` });
    // The functions' default (and approved) image is that same asset, so launches use the declared revision.
    for (const name of ['provisioner', 'instance']) expect(environmentOf(name).RUNTIME_IMAGE).toEqual(image);
  });
});

describe('cdk-nag without an environment', () => {
  it('finds nothing unacknowledged when account and region are tokens (test/infra/operability.test.ts covers a set environment)', () => {
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      expect(pack.validateScope(stack).violations.map((v) => v.ruleName)).toEqual([]);
    }
  });
});

describe('monitoring defaults', () => {
  it('creates no SNS topic without alarmEmail, and still the alarms and the dashboard', () => {
    expect(cdkContext.alarmEmail).toBe('');
    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(ofType('AWS::CloudWatch::Alarm').length).toBeGreaterThan(2 * WORKERS.length);
  });
});

describe('least privilege', () => {
  const taskDef = ofType('AWS::ECS::TaskDefinition')[0]!;
  const taskRoleId = taskDef[1].Properties.TaskRoleArn['Fn::GetAtt'][0] as string;
  const executionRoleId = taskDef[1].Properties.ExecutionRoleArn['Fn::GetAtt'][0] as string;
  const keyId = ofType('AWS::KMS::Key')[0]![0];
  const tableId = ofType('AWS::DynamoDB::Table')[0]![0];

  it("grants no wildcard action, and on Resource '*' only read-only actions and the documented exceptions", () => {
    const statements = t.allIdentityStatements();
    expect(statements.length).toBeGreaterThan(0);
    const exceptions = new Set<string>();
    for (const s of statements) {
      expect(s.NotAction, JSON.stringify(s)).toBeUndefined();
      if (s.Effect !== 'Allow') continue;
      const actions = asArray(s.Action);
      for (const a of actions) expect(a, JSON.stringify(s)).not.toMatch(/^\*$|:\*$/);
      if (!asArray(s.Resource).includes('*')) continue;
      for (const a of actions) {
        expect(isReadOnly(a) || (WILDCARD_RESOURCE_ACTIONS as readonly string[]).includes(a), `${a} on *`).toBe(true);
        if (!isReadOnly(a)) exceptions.add(a);
      }
    }
    expect([...exceptions].sort()).toEqual(['ecs:RegisterTaskDefinition', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    for (const [, r] of ofType('AWS::IAM::Role')) {
      for (const arn of asArray<unknown>(r.Properties.ManagedPolicyArns)) expect(JSON.stringify(arn)).not.toMatch(/AdministratorAccess|FullAccess/);
    }
  });

  it('lets the task role decrypt only its bootstrap token, and nothing else', () => {
    expect(BOOTSTRAP_PURPOSE).toBe('runtime-bootstrap');
    expect(readFileSync(new URL('../../runtime/server.ts', import.meta.url), 'utf8')).toContain(`purpose: '${BOOTSTRAP_PURPOSE}'`);
    expect(t.statementsOfRole(taskRoleId)).toEqual([
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
        Condition: { StringEquals: { 'kms:EncryptionContext:purpose': BOOTSTRAP_PURPOSE } },
      },
    ]);
  });

  it("lets the per-agent log read the runtime tasks' log streams, named as the adapter names them", () => {
    const [container] = taskDef[1].Properties.ContainerDefinitions;
    expect(container.Name).toBe(RUNTIME_CONTAINER_NAME);
    expect(container.LogConfiguration.Options['awslogs-stream-prefix']).toBe(RUNTIME_LOG_STREAM_PREFIX);
    const groupId = container.LogConfiguration.Options['awslogs-group'].Ref as string;
    expect(resources[groupId]).toMatchObject({ Type: 'AWS::Logs::LogGroup' });
    expect(has('agent-logs', 'readRuntimeLogs')).toBe(true);
    expect(environmentOf('agent-logs').RUNTIME_LOG_GROUP).toEqual({ Ref: groupId });
    expect(statementsWith('agent-logs', 'logs:GetLogEvents').map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [groupId, 'Arn'] }]);
  });

  it('keeps the agent runtime away from the table, the queues and the platform secrets', () => {
    for (const roleId of [taskRoleId, executionRoleId]) {
      expect(actionsOfRole(roleId).filter((a) => /^(dynamodb|secretsmanager|sqs|ses|ecs|iam):/.test(a))).toEqual([]);
    }
    expect(actionsOfRole(executionRoleId).filter((a) => a.startsWith('kms:'))).toEqual([]);
    expect(JSON.stringify(taskDef[1].Properties.ContainerDefinitions)).not.toMatch(/secretsmanager|JWT_SECRET|TABLE_NAME/);
  });

  it('gives every function the item operations on the table and its indexes (no Scan), and exactly the extras of the NEEDS table', () => {
    for (const name of allNames) {
      const actions = actionsOf(name);
      const itemStatements = statementsWith(name, 'dynamodb:GetItem');
      expect(itemStatements, name).toHaveLength(1);
      expect(itemStatements[0]!.Action, name).toEqual([...TABLE_ITEM_ACTIONS]);
      expect(JSON.stringify(itemStatements[0]!.Resource), name).toContain('/index/*');
      expect(
        actions.filter((a) => a === 'dynamodb:Scan' || a.startsWith('dynamodb:GetRecords')),
        name,
      ).toEqual([]);
      const kms = [...new Set(actions.filter((a) => a.startsWith('kms:')))].sort();
      const expectedKms = [
        ...(has(name, 'dataKey') ? ['kms:Decrypt', 'kms:GenerateDataKey'] : []),
        ...(has(name, 'launchTasks') ? ['kms:Encrypt'] : []),
      ].sort();
      expect(kms, `${name} kms`).toEqual(expectedKms);
      // Lambda itself sends an asynchronously invoked function's failed events to its dead-letter queue, with the function's role.
      const asynchronous = WORKERS.some((w) => w.name === name && w.asynchronous);
      expect(actions.includes('sqs:SendMessage'), `${name} sqs send`).toBe(has(name, 'sendProvisioning') || has(name, 'sendEvents') || asynchronous);
      if (asynchronous && !has(name, 'sendProvisioning') && !has(name, 'sendEvents')) {
        expect(JSON.stringify(statementsWith(name, 'sqs:SendMessage').map((s) => s.Resource)), name).toMatch(
          /^\[\{"Fn::GetAtt":\["FunctionsAsyncDeadLetters[0-9A-F]+","Arn"\]\}\]$/,
        );
      }
      expect(actions.includes('ecs:RunTask'), `${name} run`).toBe(has(name, 'launchTasks'));
      expect(actions.includes('ecs:StopTask'), `${name} stop`).toBe(has(name, 'stopTasks'));
      expect(actions.includes('iam:PassRole'), `${name} pass role`).toBe(has(name, 'launchTasks'));
      expect(
        actions.some((a) => a.startsWith('ses:')),
        `${name} ses`,
      ).toBe(has(name, 'sendEmail'));
      expect(actions.includes('dynamodb:DescribeTable'), `${name} describe table`).toBe(has(name, 'describeTable'));
      // Every function writes its own log group; reading another's is the per-agent log's need alone.
      expect(
        actions.filter((a) => /^logs:(Get|Filter|Describe|StartQuery)/.test(a)),
        `${name} logs`,
      ).toEqual(has(name, 'readRuntimeLogs') ? ['logs:GetLogEvents'] : []);
      expect(
        actions.filter((a) => a.startsWith('secretsmanager:')),
        name,
      ).toEqual([]);
      expect(
        actions.filter((a) => /^dynamodb:(Create|Delete|Update)Table$/.test(a)),
        name,
      ).toEqual([]);
    }
  });

  it('names only existing functions in the NEEDS table', () => {
    for (const name of Object.keys(NEEDS)) expect(allNames, name).toContain(name);
  });

  it('sends each enqueueing function to its own queue only', () => {
    // Lambda itself writes failed asynchronous invocations to their dead-letter queue (heartbeat, task-events).
    const sendTargets = (name: string) =>
      statementsWith(name, 'sqs:SendMessage')
        .map((s) => refId(s.Resource as Json))
        .filter((id) => !/AsyncDeadLetters/.test(id));
    for (const name of allNames) {
      const expected = [
        ...(has(name, 'sendEvents') ? [expect.stringMatching(/Events/)] : []),
        ...(has(name, 'sendProvisioning') ? [expect.stringMatching(/Provisioning/)] : []),
      ];
      expect(sendTargets(name).sort(), name).toEqual(expected);
    }
    // Lifecycle events are stored and queued wherever an instance changes.
    // ai and gateway meter model calls, whose spending caps emit budget events.
    expect(allNames.filter((n) => has(n, 'sendEvents')).sort()).toEqual([
      'accounts',
      'agent-autonomy',
      'agent-chat',
      'ai',
      'gateway',
      'heartbeat',
      'instance',
      'oauth-sign-in',
      'provisioner',
      'provisioner-dlq',
      // the agent runtime's model calls: metered like every model call (the spending caps)
      'runtime-model',
      'settings',
      'skills',
      'social',
      'task-events',
      'wallet-sign-in',
      // Webhook retries and the owner's redeliveries go back onto the events queue.
      'webhook-delivery',
      'webhooks',
    ]);
  });

  it('lets accounts send email only as the EMAIL_FROM identity (address and domain)', () => {
    const [ses, ...more] = statementsWith('accounts', 'ses:SendEmail');
    expect(more).toEqual([]);
    expect(asArray(ses!.Action).sort()).toEqual(['ses:SendEmail', 'ses:SendRawEmail']);
    const resources = asArray(ses!.Resource as Json[]).map((r) => JSON.stringify(r));
    expect(resources).toHaveLength(2);
    expect(resources[0]).toMatch(/:ses:.*:identity\/no-reply@example\.com"/);
    expect(resources[1]).toMatch(/:ses:.*:identity\/example\.com"/);
    const custom = inspect(synth({ emailIdentityArn: 'arn:aws:ses:eu-west-1:123456789012:identity/mail.example.org' }));
    expect(custom.statementsWith('accounts', 'ses:SendEmail')[0]!.Resource).toBe('arn:aws:ses:eu-west-1:123456789012:identity/mail.example.org');
  });

  it('lets metrics describe the table and nothing more', () => {
    const [describe, ...more] = statementsWith('metrics', 'dynamodb:DescribeTable');
    expect(more).toEqual([]);
    expect(describe).toMatchObject({ Action: 'dynamodb:DescribeTable', Resource: { 'Fn::GetAtt': [tableId, 'Arn'] } });
  });

  it('keeps the data key to GenerateDataKey and Decrypt, and Encrypt to the bootstrap purpose', () => {
    for (const name of allNames.filter((n) => has(n, 'dataKey'))) {
      const s = statementsWith(name, 'kms:Decrypt');
      expect(
        s.map((x) => x.Resource),
        name,
      ).toEqual([{ 'Fn::GetAtt': [keyId, 'Arn'] }]);
    }
    const encrypt = statementsWith('provisioner', 'kms:Encrypt');
    expect(encrypt).toEqual([
      expect.objectContaining({ Action: 'kms:Encrypt', Condition: { StringEquals: { 'kms:EncryptionContext:purpose': BOOTSTRAP_PURPOSE } } }),
    ]);
  });

  it('scopes ECS rights to the platform family and cluster, PassRole to its two roles, and the DLQ consumer to StopTask', () => {
    const cluster = ofType('AWS::ECS::Cluster')[0]![0];
    const statements = statementsOf('provisioner');
    const runTask = statements.find((s) => asArray(s.Action).includes('ecs:RunTask'))!;
    expect(JSON.stringify(runTask.Resource)).toMatch(/:task-definition\/\w+:\*"/);
    expect(runTask).toHaveProperty(['Condition', 'ArnEquals', 'ecs:cluster'], { 'Fn::GetAtt': [cluster, 'Arn'] });
    for (const action of ['ecs:StopTask', 'ecs:DescribeTasks']) {
      const s = statements.find((x) => asArray(x.Action).includes(action))!;
      expect(JSON.stringify(s.Resource), action).toContain(':task/');
      expect(s, action).toHaveProperty(['Condition', 'ArnEquals', 'ecs:cluster']);
    }
    const pass = statements.find((s) => asArray(s.Action).includes('iam:PassRole'))!;
    expect(
      asArray(pass.Resource as Json[])
        .map((r) => r['Fn::GetAtt'][0])
        .sort(),
    ).toEqual([taskRoleId, executionRoleId].sort());
    expect(pass).toHaveProperty(['Condition', 'StringEquals', 'iam:PassedToService'], 'ecs-tasks.amazonaws.com');
    expect(actionsOf('provisioner-dlq').filter((a) => /^(ecs|iam|kms):/.test(a))).toEqual(['ecs:StopTask']);
    expect(roleIdOf('provisioner-dlq')).not.toBe(roleIdOf('provisioner'));
  });
});

describe('room to grow', () => {
  const mainResources: Record<string, Json> = mainTemplate.toJSON().Resources;

  it("keeps the main stack far below CloudFormation's 500 resources (fails past 400)", () => {
    expect(Object.keys(mainResources).length).toBeLessThanOrEqual(400);
    for (const { nested, template: child } of nestedStacksOf(stack)) {
      expect(Object.keys(child.Resources).length, nested.node.path).toBeLessThanOrEqual(400);
      // Each reference into a nested stack is a parameter, and CloudFormation allows 200.
      expect(Object.keys(child.Parameters ?? {}).length, nested.node.path).toBeLessThanOrEqual(180);
    }
  });

  it('keeps every API route in the main stack and the bulk of the functions and alarms in nested stacks', () => {
    const routes = Object.values(mainResources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route');
    expect(routes).toHaveLength(allRoutes.length);
    for (const type of ['AWS::Lambda::Function', 'AWS::CloudWatch::Alarm', 'AWS::ApiGatewayV2::Integration'])
      expect(
        Object.values(mainResources).filter((r) => r.Type === type),
        type,
      ).toEqual([]);
  });

  it('keeps the logical ids of everything that holds data, so an upgrade replaces none of it', () => {
    for (const [type, ids] of Object.entries(statefulLogicalIds as Record<string, string[]>)) {
      for (const id of ids) expect(mainResources[id]?.Type, id).toBe(type);
    }
    // A new stateful resource of these kinds is added to the fixture, so the next change keeps it too.
    for (const [id, r] of Object.entries(mainResources)) {
      if (r.Type in statefulLogicalIds) expect((statefulLogicalIds as Record<string, string[]>)[r.Type], id).toContain(id);
    }
  });
});
