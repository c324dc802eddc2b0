import { Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { stackShape } from '#bench/monthly-cost';
import { ALARM_THRESHOLDS } from '#lib/constructs/monitoring';
import { addNagChecks } from '#lib/nag';
import { PlatformStack } from '#lib/platform-stack';
import { METRICS_NAMESPACE, PLATFORM_METRICS } from '#platform/metrics';
import { cdkContext, flattenNestedStacks, inspect, testApp, type Json } from './synth';

/**
 * The stack as `cdk deploy` builds it (bin/app.ts: an account and region, the cdk-nag packs as
 * validation plugins), with an alarm address so the SNS side is present too. One synthesis for the
 * whole file; test/infra/platform-stack.test.ts runs the packs on the environment-agnostic stack.
 */
const app = testApp({ ...cdkContext, alarmEmail: 'ops@example.com', 'aws:cdk:bundling-stacks': [] });
const stack = new PlatformStack(app, 'AgentPlatform', { env: { account: '123456789012', region: 'eu-west-1' } });
addNagChecks(app);
// Throws (the validation report in the message) on any unacknowledged finding. The nested stacks' resources are read with the main stack's.
const template = Template.fromJSON(flattenNestedStacks(stack, Template.fromStack(stack).toJSON()));
const t = inspect(template);
const { resources, ofType } = t;

const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties as Json);
const metricNamesOf = (alarm: Json): string[] =>
  alarm.MetricName ? [alarm.MetricName] : (alarm.Metrics ?? []).flatMap((m: Json) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
const dimensionsOf = (alarm: Json): Json[] =>
  alarm.Dimensions ? alarm.Dimensions : (alarm.Metrics ?? []).flatMap((m: Json) => m.MetricStat?.Metric.Dimensions ?? []);
const alarmsOn = (metricName: string, dimension?: Json) =>
  alarms.filter((a) => metricNamesOf(a).includes(metricName) && (!dimension || dimensionsOf(a).some((d) => JSON.stringify(d) === JSON.stringify(dimension))));

describe('cdk-nag (AwsSolutions and Serverless packs, as CDK validation plugins)', () => {
  it('leaves no unacknowledged finding on the stack', () => {
    // The synthesis above passed the plugins; the packs' own walk confirms the count the figures quote.
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      const report = pack.validateScope(app);
      expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(' ')}`)).toEqual([]);
    }
  });

  it('fails a synthesis with a finding nobody acknowledged (the plugins are live)', () => {
    const probe = testApp({});
    const probeStack = new Stack(probe, 'Probe');
    new Queue(probeStack, 'Unencrypted', { enforceSSL: false });
    addNagChecks(probe);
    expect(() => probe.synth()).toThrow(/AwsSolutions-SQS4/);
  });

  it('acknowledges only the categories the architecture needs, each with a one-line reason', () => {
    const acknowledged = new Map<string, string>();
    const walk = (c: IConstruct) => {
      for (const entry of c.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [qualified, reason] of Object.entries(entry.data as Record<string, string>)) {
          const id = qualified.replace(/^annotation::/i, '');
          // aws-cdk-lib's own constructs acknowledge some CloudFormation-Validate rules; only ours are checked here.
          if (/^(AwsSolutions|Serverless)-/.test(id)) acknowledged.set(id, reason);
        }
      }
      c.node.children.forEach(walk);
    };
    walk(app);
    for (const [id, reason] of acknowledged) {
      expect(reason, id).toMatch(/^[^\n]{20,220}$/);
    }
    expect([...new Set([...acknowledged.keys()].map((id) => id.replace(/\[.*$/, '')))].sort()).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-EC23',
      'AwsSolutions-ECS2',
      'AwsSolutions-IAM5',
      'AwsSolutions-L1',
      'AwsSolutions-S1',
      'AwsSolutions-SMG4',
      'AwsSolutions-SQS3',
      'Serverless-LambdaDLQ',
      'Serverless-LambdaEventSourceMappingDestination',
      'Serverless-LambdaLatestVersion',
      'Serverless-SNSRedrivePolicy',
      'Serverless-SQSRedrivePolicy',
    ]);
  });
});

describe('alarms', () => {
  const topicId = ofType('AWS::SNS::Topic')[0]![0];

  it('notify the alarmEmail address through one SNS topic (TLS only), every alarm', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    expect(JSON.stringify(ofType('AWS::SNS::TopicPolicy')[0]![1].Properties)).toContain('aws:SecureTransport');
    expect(alarms.length).toBeGreaterThan(0);
    for (const a of alarms) expect(a.AlarmActions, a.AlarmDescription).toEqual([{ Ref: topicId }]);
  });

  it('watch every dead-letter queue, the events one included, for any visible message', () => {
    const queueIds = ofType('AWS::SQS::Queue').map(([id]) => id);
    // A dead-letter queue: a queue's redrive target, or a function's asynchronous dead-letter target.
    const targets = JSON.stringify([
      ...ofType('AWS::SQS::Queue').map(([, q]) => q.Properties.RedrivePolicy ?? {}),
      ...ofType('AWS::Lambda::Function').map(([, f]) => f.Properties.DeadLetterConfig ?? {}),
    ]);
    const dlqIds = queueIds.filter((id) => targets.includes(`"${id}"`));
    expect(dlqIds.length).toBe(3);
    expect(dlqIds.some((id) => /Events.*Dlq/.test(id))).toBe(true);
    for (const id of dlqIds) {
      const [alarm] = alarmsOn('ApproximateNumberOfMessagesVisible', { Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } });
      expect(alarm, id).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Maximum', Period: 60 });
    }
  });

  it("watch the provisioning queue's oldest message, the API's 5xx rate and instances stuck in provisioning", () => {
    const provisioningQueue = ofType('AWS::SQS::Queue').find(([id]) => /ProvisioningQueue/.test(id))![0];
    expect(alarmsOn('ApproximateAgeOfOldestMessage', { Name: 'QueueName', Value: { 'Fn::GetAtt': [provisioningQueue, 'QueueName'] } })[0]).toMatchObject({
      Threshold: ALARM_THRESHOLDS.provisioningOldestSeconds,
    });
    const api5xx = alarms.find((a) => metricNamesOf(a).includes('5xx'))!;
    expect(metricNamesOf(api5xx).sort()).toEqual(['5xx', 'Count']);
    expect(api5xx.Threshold).toBe(ALARM_THRESHOLDS.api5xxPercent);
    expect(JSON.stringify(api5xx.Metrics)).toContain('100 * errors / requests');
    const [stuck] = alarmsOn(PLATFORM_METRICS.stuckProvisioning);
    expect(stuck).toMatchObject({ Namespace: METRICS_NAMESPACE, Threshold: 1, Statistic: 'Maximum' });
  });

  it("watch each function's errors and throttles", () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(20);
    for (const [id] of functions) {
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarmsOn(metric, { Name: 'FunctionName', Value: { Ref: id } }), `${id} ${metric}`).toHaveLength(1);
      }
    }
  });

  it('watch DynamoDB throttled requests and system errors on the table', () => {
    const tableId = ofType('AWS::DynamoDB::Table')[0]![0];
    for (const metric of ['ThrottledRequests', 'SystemErrors']) {
      const found = alarmsOn(metric, { Name: 'TableName', Value: { Ref: tableId } });
      expect(found, metric).toHaveLength(1);
      expect(found[0]!.Metrics.length).toBeLessThanOrEqual(11);
    }
  });
});

describe('dashboard, tracing and logs', () => {
  it('has one dashboard of requests, latency, provisions, launches, heartbeat results and payments', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties.DashboardBody);
    for (const name of Object.values(PLATFORM_METRICS)) expect(body, name).toContain(`\\"${name}\\"`);
    for (const apiMetric of ['Count', 'Latency', '5xx', '4xx']) expect(body).toContain(`\\"${apiMetric}\\"`);
    expect(body).toContain(`\\"${METRICS_NAMESPACE}\\"`);
    expect(body).toContain('p99');
  });

  it('traces every function with Lambda active tracing', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
  });

  it('sets a retention on every log group, and every function and container logs to one of them', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(20);
    for (const [id, g] of groups) expect(g.Properties.RetentionInDays, id).toBeGreaterThan(0);
    const groupIds = new Set(groups.map(([id]) => id));
    for (const [id, fn] of ofType('AWS::Lambda::Function')) expect(groupIds.has(fn.Properties.LoggingConfig?.LogGroup?.Ref), id).toBe(true);
    const container = ofType('AWS::ECS::TaskDefinition')[0]![1].Properties.ContainerDefinitions[0];
    expect(groupIds.has(container.LogConfiguration.Options['awslogs-group'].Ref)).toBe(true);
    const flowLog = ofType('AWS::EC2::FlowLog')[0]![1].Properties;
    expect(flowLog).toMatchObject({ TrafficType: 'REJECT', LogDestinationType: 'cloud-watch-logs' });
    expect(groupIds.has(flowLog.LogGroupName.Ref)).toBe(true);
    // No custom resource or log-retention helper function creating groups of its own.
    expect(Object.values(resources).filter((r) => /^Custom::|LogRetention/.test(r.Type))).toEqual([]);
  });

  it('gives the asynchronously invoked functions and their EventBridge rules a dead-letter queue', () => {
    const asyncDlq = ofType('AWS::SQS::Queue').find(([id]) => /AsyncDeadLetters/.test(id))![0];
    for (const name of ['heartbeat', 'task-events']) {
      expect(t.functionProps(name).DeadLetterConfig, name).toEqual({ TargetArn: { 'Fn::GetAtt': [asyncDlq, 'Arn'] } });
    }
    const rules = ofType('AWS::Events::Rule');
    // The heartbeat every 5 minutes, its minute sweep (scheduled prompts, idle auto-stop), and ECS task-state changes.
    expect(rules).toHaveLength(3);
    for (const [id, rule] of rules) expect(rule.Properties.Targets[0].DeadLetterConfig, id).toEqual({ Arn: { 'Fn::GetAtt': [asyncDlq, 'Arn'] } });
  });
});

describe('npm run cost counts the stack as synthesized', () => {
  const shape = stackShape({ ...cdkContext, alarmEmail: 'ops@example.com' });
  const count = (type: string) => ofType(type).length;

  it('the alarms and the metrics CloudWatch bills them by', () => {
    expect(shape.alarms).toBe(alarms.length);
    const metrics = alarms.reduce((n, a) => n + (a.MetricName ? 1 : (a.Metrics ?? []).filter((m: Json) => m.MetricStat).length), 0);
    expect(shape.alarmMetrics).toBe(metrics);
    expect(shape.dashboards).toBe(count('AWS::CloudWatch::Dashboard'));
  });

  it('the hourly resources: NAT gateways and their addresses, interface endpoints, the load balancer, the edge tasks', () => {
    expect(shape.natGateways).toBe(count('AWS::EC2::NatGateway'));
    expect(shape.natGateways).toBe(count('AWS::EC2::EIP'));
    expect(shape.interfaceEndpoints).toBe(ofType('AWS::EC2::VPCEndpoint').filter(([, e]) => e.Properties.VpcEndpointType === 'Interface').length);
    expect(count('AWS::ElasticLoadBalancingV2::LoadBalancer')).toBe(1);
    expect(shape.zones).toBe(ofType('AWS::EC2::Subnet').filter(([, s]) => s.Properties.MapPublicIpOnLaunch === true).length);
    const [service] = ofType('AWS::ECS::Service').map(([, svc]) => svc.Properties as Json);
    expect(service?.DesiredCount).toBe(shape.edgeTasks);
    const edgeTask = ofType('AWS::ECS::TaskDefinition')
      .map(([, td]) => td.Properties as Json)
      .find((td) => td.ContainerDefinitions.some((c: Json) => c.Name === 'edge'));
    expect(edgeTask).toMatchObject({ Cpu: String(shape.edgeTaskCpu), Memory: String(shape.edgeTaskMemoryMiB) });
  });

  it('the monthly items: keys, secrets, functions and SQS event sources', () => {
    expect(shape.kmsKeys).toBe(count('AWS::KMS::Key'));
    expect(shape.secrets).toBe(count('AWS::SecretsManager::Secret'));
    expect(shape.functions).toBe(count('AWS::Lambda::Function'));
    expect(shape.queueEventSources).toBe(count('AWS::Lambda::EventSourceMapping'));
  });
});
