import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { HTTP_TIMEOUT, WORKERS, WORKER_NAMES } from '#lib/constructs/functions';
import { MAX_RECEIVE_COUNT } from '#lib/constructs/queues';
import { functionDescription, streamingFunctionDescription } from '#lib/constructs/platform-function';
import { GATEWAY_TOKEN_PURPOSE, NEEDS, needsOf, TABLE_ITEM_ACTIONS, WILDCARD_RESOURCE_ACTIONS, type Need } from '#lib/permissions';
import { EDGE_DRAIN, EDGE_HEALTH_PATH, EDGE_IDLE_TIMEOUT, EDGE_SCALING } from '#lib/constructs/edge';
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
    // The private subnets: runtime tasks get no public address (the launcher asks for none either).
    const privateSubnets = ofType('AWS::EC2::Subnet')
      .filter(([, s]) => !s.Properties.MapPublicIpOnLaunch)
      .map(([id]) => ({ Ref: id }));
    expect(privateSubnets).toHaveLength(2);
    expect(env.ECS_SUBNET_IDS['Fn::Join'][1].filter((p: unknown) => p !== ',')).toEqual(privateSubnets);
    expect(env.ECS_SECURITY_GROUP_IDS).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/RuntimeSecurityGroup/), 'GroupId'] });
  });

  it('takes operator settings from CDK context', () => {
    const { template: custom, dockerImages: customImages } = synthStack({
      adminEmails: 'ops@example.com',
      appUrl: 'https://app.example.org',
      runtimeImage: 'example/runtime:1',
      agentCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-edge',
    });
    // An operator's runtimeImage replaces the runtime's image asset: only the edge's is built.
    expect(customImages.map((i) => i.source.dockerFile)).toEqual(['edge/Dockerfile']);
    // An imported certificate: none is requested, and the HTTPS listener serves it.
    custom.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    custom.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Port: 443,
      Certificates: [{ CertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-edge' }],
    });
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
    expect(() => readSettings(node({ agentDomain: 'https://agents.example.com' }))).toThrow(/agentDomain/);
    expect(() => readSettings(node({ agentHostedZoneId: 'not-a-zone' }))).toThrow(/agentHostedZoneId/);
    expect(() => readSettings(node({ agentHostedZoneName: 'example.com' }))).toThrow(/needs agentHostedZoneId/);
    expect(() => readSettings(node({ agentHostedZoneId: 'Z0123456789ABC', agentHostedZoneName: 'example.org' }))).toThrow(/not inside the hosted zone/);
    expect(() => readSettings(node({ agentCertificateArn: 'arn:aws:iam::123456789012:server-certificate/x' }))).toThrow(/agentCertificateArn/);
    expect(readSettings(node({ agentHostedZoneId: 'Z0123456789ABC', agentHostedZoneName: 'example.com' }))).toMatchObject({
      agentHostedZoneId: 'Z0123456789ABC',
    });
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
  it('marks exactly the agent-chat, ai, gateway, mcp and openai-compatible groups as streaming', () => {
    expect(streamingGroups.sort()).toEqual(['agent-chat', 'ai', 'gateway', 'mcp', 'openai-compatible']);
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
    // The files bucket and the agent edge's access logs.
    template.resourceCountIs('AWS::S3::Bucket', 2);
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

  it('has public subnets for the load balancer and private ones for the tasks and the functions in two AZs, with one NAT gateway', () => {
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

  it('adds SQS, KMS and ECS interface endpoints, reachable from the functions, the runtime and the edge only, when asked, and a NAT per AZ', () => {
    const custom = inspect(synth({ awsInterfaceEndpoints: true, natGateways: 2 }));
    const endpoints = custom.ofType('AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface');
    expect(endpoints.map(([, e]) => JSON.stringify(e.Properties.ServiceName).match(/\.(sqs|kms|ecs)"/)?.[1]).sort()).toEqual(['ecs', 'kms', 'sqs']);
    const sgOf = (description: RegExp) => custom.logicalIdOf('AWS::EC2::SecurityGroup', (p) => description.test(p.GroupDescription));
    // With private DNS every caller in the private tier resolves to the endpoints: the functions, the runtime tasks (bootstrap KMS decrypt), the edge.
    const callers = [sgOf(/^Agent platform functions/), sgOf(/^Agent runtime tasks/), sgOf(/^Agent edge tasks/)].sort();
    for (const [, e] of endpoints) {
      expect(e.Properties.PrivateDnsEnabled).toBe(true);
      const sg = custom.resources[e.Properties.SecurityGroupIds[0]['Fn::GetAtt'][0]]!;
      expect(sg.Properties.SecurityGroupIngress ?? []).toEqual([]);
      const ingress = custom
        .ofType('AWS::EC2::SecurityGroupIngress')
        .filter(([, i]) => i.Properties.GroupId['Fn::GetAtt'][0] === e.Properties.SecurityGroupIds[0]['Fn::GetAtt'][0]);
      expect(ingress.map(([, i]) => i.Properties.FromPort)).toEqual([443, 443, 443]);
      expect(ingress.map(([, i]) => i.Properties.SourceSecurityGroupId['Fn::GetAtt'][0]).sort()).toEqual(callers);
    }
    expect(custom.ofType('AWS::EC2::NatGateway')).toHaveLength(2);
  });

  it('puts exactly the functions that talk to instances in the private subnets, behind the functions security group', () => {
    const inVpc = allNames.filter((n) => functionProps(n).VpcConfig);
    expect(inVpc.sort()).toEqual(allNames.filter((n) => has(n, 'reachInstances')).sort());
    // memory pushes writes to the running agent at once; openai-compatible chats with an agent model; a checkpoint's rewind reloads the agent.
    expect(inVpc.sort()).toEqual([
      'accounts',
      'agent-autonomy',
      'agent-chat',
      'agents',
      'heartbeat',
      'instance',
      'memory',
      'openai-compatible',
      'provisioner',
      'settings',
      'skills',
      'task-events',
    ]);
    for (const name of inVpc) {
      const vpc = functionProps(name).VpcConfig;
      expect(vpc.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [functionsSg, 'GroupId'] }]);
      expect(vpc.SubnetIds.map((s: Json) => s.Ref).sort()).toEqual([...privateSubnets].sort());
    }
  });

  it('admits the runtime port from the edge and the functions security groups only, never from the internet', () => {
    const edgeSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent edge tasks/.test(p.GroupDescription));
    const inline = asArray<Json>(resources[runtimeSg]!.Properties.SecurityGroupIngress);
    expect(inline).toEqual([]);
    const rules = ofType('AWS::EC2::SecurityGroupIngress').filter(([, r]) => r.Properties.GroupId['Fn::GetAtt'][0] === runtimeSg);
    expect(rules.map(([, r]) => r.Properties.SourceSecurityGroupId['Fn::GetAtt'][0]).sort()).toEqual([functionsSg, edgeSg].sort());
    for (const [, r] of rules) expect(r.Properties).toMatchObject({ IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080 });
    // The internet reaches the load balancer's 443 and 80 and nothing else.
    const lbSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent edge load balancer/.test(p.GroupDescription));
    for (const [id, sg] of ofType('AWS::EC2::SecurityGroup')) {
      const open = asArray<Json>(sg.Properties.SecurityGroupIngress).filter((rule) => rule.CidrIp === '0.0.0.0/0' || rule.CidrIpv6 === '::/0');
      expect(
        open.map((rule) => rule.FromPort).sort((a, b) => a - b),
        id,
      ).toEqual(id === lbSg ? [80, 443] : []);
    }
    for (const [, sg] of ofType('AWS::EC2::SecurityGroup').filter(([id]) => id !== lbSg)) {
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

describe('runtime task guard rails', () => {
  const runtimeTask = ofType('AWS::ECS::TaskDefinition').find(([, d]) => d.Properties.ContainerDefinitions[0].Name === RUNTIME_CONTAINER_NAME)![1].Properties;
  const [container] = runtimeTask.ContainerDefinitions;

  it('checks the container at the unauthenticated /livez and replaces a task that stops answering', () => {
    expect(container.HealthCheck).toMatchObject({ Interval: 30, Timeout: 5, StartPeriod: 30, Retries: 3 });
    expect(container.HealthCheck.Command.slice(0, 2)).toEqual(['CMD', 'node']);
    expect(container.HealthCheck.Command.join(' ')).toContain('http://127.0.0.1:8080/livez');
    expect(readFileSync(new URL('../../runtime/routes.ts', import.meta.url), 'utf8')).toContain("url.pathname === '/livez'");
  });

  it('runs on a read-only root filesystem with a writable /tmp volume, which approved-image revisions keep', () => {
    expect(container.ReadonlyRootFilesystem).toBe(true);
    expect(container.MountPoints).toEqual([{ ContainerPath: '/tmp', SourceVolume: 'tmp', ReadOnly: false }]);
    expect(runtimeTask.Volumes).toEqual([{ Name: 'tmp' }]);
    expect(readFileSync(new URL('../../adapters/launcher-ecs.ts', import.meta.url), 'utf8')).toContain('volumes: td.volumes');
  });
});

describe('runtime image', () => {
  it('is runtime/Dockerfile built by CDK as an ARM64 image asset, run by the task definition by default', () => {
    expect(cdkContext.runtimeImage).toBe('');
    expect(dockerImages.map((i) => i.source.dockerFile).sort()).toEqual(['edge/Dockerfile', 'runtime/Dockerfile']);
    const asset = dockerImages.find((i) => i.source.dockerFile === 'runtime/Dockerfile')!;
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
  it('creates the alarm topic without alarmEmail, with no subscriber, and the alarms and the dashboard', () => {
    expect(cdkContext.alarmEmail).toBe('');
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
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

  it('gives every function the item operations on the table and its indexes (Scan only where NEEDS says, on the table alone), and exactly the extras of the NEEDS table', () => {
    for (const name of allNames) {
      const actions = actionsOf(name);
      const itemStatements = statementsWith(name, 'dynamodb:GetItem');
      expect(itemStatements, name).toHaveLength(1);
      expect(itemStatements[0]!.Action, name).toEqual([...TABLE_ITEM_ACTIONS]);
      expect(JSON.stringify(itemStatements[0]!.Resource), name).toContain('/index/*');
      expect(
        actions.filter((a) => a.startsWith('dynamodb:GetRecords')),
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
      expect(actions.includes('dynamodb:Scan'), `${name} scan`).toBe(has(name, 'scanTable'));
      for (const statement of statementsWith(name, 'dynamodb:Scan')) expect(JSON.stringify(statement.Resource), name).not.toContain('/index/');
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
      // the spending caps' actions (domain/ai/budget-actions.ts) pause an instance with its lifecycle event
      'billing',
      // a card event that leaves no subscription in force stops the owner's instance
      'card',
      'gateway',
      'heartbeat',
      'instance',
      'oauth-sign-in',
      // the OpenAI-compatible API meters model calls as ai does, and wakes an agent model's instance
      'openai-compatible',
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

describe('agent edge', () => {
  const lb = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
  const lbId = lb[0]![0];
  const listeners = ofType('AWS::ElasticLoadBalancingV2::Listener').map(([, l]) => l.Properties as Json);
  const [targetGroupId, targetGroup] = ofType('AWS::ElasticLoadBalancingV2::TargetGroup')[0]!;
  const edgeTaskDef = ofType('AWS::ECS::TaskDefinition').find(([, d]) => d.Properties.ContainerDefinitions[0].Name === 'edge')!;
  const [serviceId, service] = ofType('AWS::ECS::Service')[0]!;
  const privateSubnets = ofType('AWS::EC2::Subnet')
    .filter(([, s]) => !s.Properties.MapPublicIpOnLaunch)
    .map(([id]) => id);
  const publicSubnets = ofType('AWS::EC2::Subnet')
    .filter(([, s]) => s.Properties.MapPublicIpOnLaunch)
    .map(([id]) => id);
  const withZone = inspect(synth({ agentHostedZoneId: 'Z0123456789ABC', agentHostedZoneName: 'example.com' }));

  it('is one internet-facing load balancer in the public subnets, idle timeout for long websockets, access logs on', () => {
    expect(lb).toHaveLength(1);
    const props = lb[0]![1].Properties;
    expect(props).toMatchObject({ Scheme: 'internet-facing', Type: 'application' });
    expect(props.Subnets.map((s: Json) => s.Ref).sort()).toEqual([...publicSubnets].sort());
    const attributes = Object.fromEntries(props.LoadBalancerAttributes.map((a: Json) => [a.Key, a.Value]));
    expect(attributes).toMatchObject({
      'idle_timeout.timeout_seconds': String(EDGE_IDLE_TIMEOUT.toSeconds()),
      'access_logs.s3.enabled': 'true',
      'routing.http.drop_invalid_header_fields.enabled': 'true',
    });
    expect(EDGE_IDLE_TIMEOUT.toSeconds()).toBe(3600);
    const logBucket = resources[attributes['access_logs.s3.bucket'].Ref]!;
    expect(logBucket.Type).toBe('AWS::S3::Bucket');
    expect(logBucket.Properties.PublicAccessBlockConfiguration).toMatchObject({ BlockPublicAcls: true, RestrictPublicBuckets: true });
  });

  it('serves HTTPS on 443 with the wildcard certificate and redirects HTTP on 80 to it', () => {
    expect(listeners.map((l) => l.Port).sort((a, b) => a - b)).toEqual([80, 443]);
    const https = listeners.find((l) => l.Port === 443)!;
    expect(https).toMatchObject({ Protocol: 'HTTPS', DefaultActions: [{ Type: 'forward', TargetGroupArn: { Ref: targetGroupId } }] });
    expect(https.SslPolicy).toMatch(/^ELBSecurityPolicy-TLS13/);
    const [certificateId, certificate] = ofType('AWS::CertificateManager::Certificate')[0]!;
    expect(https.Certificates).toEqual([{ CertificateArn: { Ref: certificateId } }]);
    expect(certificate.Properties).toMatchObject({ DomainName: '*.agents.example.com', ValidationMethod: 'DNS' });
    const http = listeners.find((l) => l.Port === 80)!;
    expect(http).toMatchObject({
      Protocol: 'HTTP',
      DefaultActions: [{ Type: 'redirect', RedirectConfig: { Protocol: 'HTTPS', Port: '443', StatusCode: 'HTTP_301' } }],
    });
  });

  it('validates the certificate in the hosted zone and aliases *.<agentDomain> to the load balancer when the zone is given', () => {
    expect(ofType('AWS::Route53::RecordSet')).toEqual([]);
    const [, certificate] = withZone.ofType('AWS::CertificateManager::Certificate')[0]!;
    expect(certificate.Properties.DomainValidationOptions).toEqual([{ DomainName: '*.agents.example.com', HostedZoneId: 'Z0123456789ABC' }]);
    const records = withZone.ofType('AWS::Route53::RecordSet').map(([, r]) => r.Properties as Json);
    expect(records).toHaveLength(1);
    const zoneLb = withZone.ofType('AWS::ElasticLoadBalancingV2::LoadBalancer')[0]![0];
    expect(records[0]).toMatchObject({ Name: '*.agents.example.com.', Type: 'A', HostedZoneId: 'Z0123456789ABC' });
    expect(JSON.stringify(records[0]!.AliasTarget.DNSName)).toContain(zoneLb);
  });

  it('health-checks the edge tasks at /_edge/health on the edge port and drains them on deploy', () => {
    expect(targetGroup.Properties).toMatchObject({
      TargetType: 'ip',
      Port: 8080,
      Protocol: 'HTTP',
      HealthCheckPath: EDGE_HEALTH_PATH,
      HealthCheckPort: '8080',
      Matcher: { HttpCode: '200' },
    });
    expect(EDGE_HEALTH_PATH).toBe('/_edge/health');
    const attributes = Object.fromEntries(targetGroup.Properties.TargetGroupAttributes.map((a: Json) => [a.Key, a.Value]));
    expect(attributes['deregistration_delay.timeout_seconds']).toBe(String(EDGE_DRAIN.toSeconds()));
    const [container] = edgeTaskDef[1].Properties.ContainerDefinitions;
    expect(container).toMatchObject({ PortMappings: [expect.objectContaining({ ContainerPort: 8080 })], StopTimeout: EDGE_DRAIN.toSeconds() });
    expect(service.Properties).toMatchObject({
      DeploymentConfiguration: { MinimumHealthyPercent: 100, MaximumPercent: 200, DeploymentCircuitBreaker: { Enable: true, Rollback: true } },
      LoadBalancers: [{ ContainerName: 'edge', ContainerPort: 8080, TargetGroupArn: { Ref: targetGroupId } }],
    });
  });

  it('runs at least two edge tasks across both private subnets, without public IPs, scaling on CPU and requests', () => {
    expect(service.Properties).toMatchObject({ LaunchType: 'FARGATE', DesiredCount: 2 });
    const network = service.Properties.NetworkConfiguration.AwsvpcConfiguration;
    expect(network.AssignPublicIp).toBe('DISABLED');
    expect(network.Subnets.map((s: Json) => s.Ref).sort()).toEqual([...privateSubnets].sort());
    const [targetId, target] = ofType('AWS::ApplicationAutoScaling::ScalableTarget')[0]!;
    expect(target.Properties).toMatchObject({
      MinCapacity: EDGE_SCALING.minCapacity,
      MaxCapacity: EDGE_SCALING.maxCapacity,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    expect(EDGE_SCALING.minCapacity).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(target.Properties.ResourceId)).toContain(serviceId);
    const policies = ofType('AWS::ApplicationAutoScaling::ScalingPolicy').map(([, p]) => p.Properties as Json);
    expect(policies.every((p) => p.ScalingTargetId.Ref === targetId)).toBe(true);
    const metrics = policies.map((p) => p.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.PredefinedMetricType).sort();
    expect(metrics).toEqual(['ALBRequestCountPerTarget', 'ECSServiceAverageCPUUtilization']);
    const requests = policies.find(
      (p) => p.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.PredefinedMetricType === 'ALBRequestCountPerTarget',
    )!;
    expect(JSON.stringify(requests.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.ResourceLabel)).toContain(targetGroupId);
  });

  it('admits the edge port on the edge tasks from the load balancer only', () => {
    const edgeSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent edge tasks/.test(p.GroupDescription));
    const lbSg = t.logicalIdOf('AWS::EC2::SecurityGroup', (p) => /^Agent edge load balancer/.test(p.GroupDescription));
    expect(asArray(resources[edgeSg]!.Properties.SecurityGroupIngress)).toEqual([]);
    const rules = ofType('AWS::EC2::SecurityGroupIngress').filter(([, r]) => r.Properties.GroupId['Fn::GetAtt'][0] === edgeSg);
    expect(rules.map(([, r]) => r.Properties)).toEqual([
      expect.objectContaining({ IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080, SourceSecurityGroupId: { 'Fn::GetAtt': [lbSg, 'GroupId'] } }),
    ]);
    expect(service.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups).toEqual([{ 'Fn::GetAtt': [edgeSg, 'GroupId'] }]);
  });

  it('gives the edge its settings and exactly its rights: table items, gateway-token decrypt, wake on the provisioning queue, its events on the events queue', () => {
    const [container] = edgeTaskDef[1].Properties.ContainerDefinitions;
    const env = Object.fromEntries(container.Environment.map((e: Json) => [e.Name, e.Value]));
    const tableId = ofType('AWS::DynamoDB::Table')[0]![0];
    const keyId = ofType('AWS::KMS::Key')[0]![0];
    const queueId = ofType('AWS::SQS::Queue').find(([id]) => /ProvisioningQueue/.test(id))![0];
    const eventsQueueId = ofType('AWS::SQS::Queue').find(([id]) => /EventsQueue/.test(id))![0];
    expect(env).toEqual({
      STAGE: 'aws',
      TABLE_NAME: { Ref: tableId },
      AGENT_DOMAIN: 'agents.example.com',
      EDGE_PORT: '8080',
      WAKE_WAIT_SECONDS: '20',
      KMS_KEY_ID: { 'Fn::GetAtt': [keyId, 'Arn'] },
      PROVISIONING_QUEUE_URL: { Ref: queueId },
      EVENTS_QUEUE_URL: { Ref: eventsQueueId },
      ADMIN_EMAILS: '',
      TESTER_EMAILS: '',
    });
    expect(JSON.stringify(container)).not.toMatch(/secretsmanager|JWT_SECRET/);
    const taskRole = edgeTaskDef[1].Properties.TaskRoleArn['Fn::GetAtt'][0] as string;
    expect(t.statementsOfRole(taskRole)).toEqual([
      expect.objectContaining({ Action: [...TABLE_ITEM_ACTIONS], Resource: [{ 'Fn::GetAtt': [tableId, 'Arn'] }, expect.anything()] }),
      expect.objectContaining({ Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [queueId, 'Arn'] } }),
      expect.objectContaining({ Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [eventsQueueId, 'Arn'] } }),
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
        Condition: { StringEquals: { 'kms:EncryptionContext:purpose': GATEWAY_TOKEN_PURPOSE } },
      },
    ]);
    expect(readFileSync(new URL('../../data/instances.ts', import.meta.url), 'utf8')).toContain(`TOKEN_PURPOSE = '${GATEWAY_TOKEN_PURPOSE}'`);
  });

  it('builds the edge image from edge/Dockerfile as an ARM64 asset, the edge code in its context', () => {
    const asset = dockerImages.find((i) => i.source.dockerFile === 'edge/Dockerfile')!;
    expect(asset.source).toMatchObject({ platform: 'linux/arm64' });
    const dockerfile = readFileSync(new URL('../../edge/Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toContain('build/edge-bundle.ts');
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('alarms on the edge: 5xx rate, unhealthy targets, connection count', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => JSON.stringify(a.Properties));
    const on = (metric: string) => alarms.filter((a) => a.includes(`"MetricName":"${metric}"`) && a.includes(lbId.slice(0, 12)));
    expect(on('HTTPCode_Target_5XX_Count')).toHaveLength(1);
    expect(on('HTTPCode_ELB_5XX_Count')).toHaveLength(1);
    expect(alarms.filter((a) => a.includes('"MetricName":"UnHealthyHostCount"'))).toHaveLength(1);
    expect(alarms.filter((a) => a.includes('"MetricName":"ActiveConnectionCount"'))).toHaveLength(1);
  });
});
