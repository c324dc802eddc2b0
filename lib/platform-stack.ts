import { fileURLToPath } from 'node:url';
import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod, type IFunction, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { Construct, Node } from 'constructs';
import { contract } from '#contract';
import { Api } from './constructs/api';
import { Compute, RUNTIME_PORT } from './constructs/compute';
import { DataTable } from './constructs/data-table';
import { DEFAULT_EDGE_PORT, Edge } from './constructs/edge';
import {
  concurrencyFunctions,
  Functions,
  pascalCase,
  platformFunctions,
  PROVISIONER_DLQ_TIMEOUT,
  PROVISIONER_TIMEOUT,
  QUEUE_CONSUMERS,
  streamingName,
  WEBHOOK_DELIVERY_TIMEOUT,
} from './constructs/functions';
import { type Concurrency, readConcurrency } from './concurrency';
import { Keys } from './constructs/keys';
import { Monitoring } from './constructs/monitoring';
import { FileBucket } from './constructs/file-bucket';
import { Queues } from './constructs/queues';
import { Secrets } from './constructs/secrets';
import { acknowledgeByDesign } from './nag';
import { applyGrants, grantEdge, grantNeedsOf, needsOf, type Need } from './permissions';
import { checkRoutes, declaredDefault, readOperatorSettings, settingsEnvironment, type FunctionIdentity, type OperatorSettings } from './settings';
import { readStage, stagedDomain } from './stage';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Stack-level operator settings, read from CDK context. Defaults live in cdk.json; override any of
 * them at deploy time, e.g. `npx cdk deploy -c appUrl=https://app.example.com -c adminEmails=a@x.com,b@y.com`.
 * - appUrl: public URL of the web app (links in emails, OAuth redirects). Empty: the API's own URL.
 * - adminEmails / testerEmails: comma-separated accounts with admin rights / the tester bypass.
 * - runtimeImage: empty (default) builds runtime/Dockerfile as an image asset for the Fargate tasks;
 *   a registry image (ARM64, speaking the runtime protocol of runtime/) replaces it.
 * - stage: empty (default) or a short name: prefixes the stack names, hence every physical name (lib/stage.ts),
 *   and puts the stage's agents under `<stage>.<agentDomain>`, so two stages share one account and zone.
 * - agentDomain: parent domain of the agents' subdomains; the agent edge answers `*.<agentDomain>`.
 * - agentHostedZoneId / agentHostedZoneName: the Route 53 hosted zone holding agentDomain (name
 *   defaults to agentDomain): validates the edge's wildcard certificate and takes its wildcard record.
 * - agentCertificateArn: an ACM certificate for `*.<agentDomain>` in the stack's region, instead of
 *   the one the stack requests. With neither a zone nor a certificate, the requested certificate waits
 *   for its validation CNAME and the operator points `*.<agentDomain>` at the AgentEdgeDns output.
 * - natGateways: 1 (default) or 2 (one per AZ), for the functions that run in the VPC.
 * - awsInterfaceEndpoints: true adds SQS, KMS and ECS interface endpoints (≈ $44/month, see compute.ts).
 * - alarmEmail: address(es), comma-separated, subscribed to the SNS topic every CloudWatch alarm of the stack notifies.
 * - alarmWebhookUrl: HTTPS URL(s), comma-separated, subscribed to the same topic (a paging service's SNS endpoint).
 * - functionConcurrency, streamingConcurrency, functionConcurrency.<name>, queueConcurrency, lambdaConcurrencyLimit:
 *   reserved concurrency and the SQS event sources' ceiling (lib/concurrency.ts).
 * - emailIdentityArn: SES identity ARN(s), comma-separated, the account email may be sent as;
 *   default: the address and the domain of settings.EMAIL_FROM in the stack's account and region.
 * The functions' own settings (platform/config.ts) are the `settings` / `secretSettings` context keys:
 * see lib/settings.ts.
 */
export interface PlatformSettings {
  /** CDK context `stage`: empty for the deployment as it always was. */
  stage: string;
  appUrl: string;
  adminEmails: string;
  testerEmails: string;
  runtimeImage: string;
  agentDomain: string;
  agentHostedZoneId: string;
  agentHostedZoneName: string;
  agentCertificateArn: string;
  natGateways: number;
  awsInterfaceEndpoints: boolean;
  emailIdentityArn: string;
  alarmEmail: string;
  alarmWebhookUrl: string;
}

type TextKey = Exclude<keyof PlatformSettings, 'natGateways' | 'awsInterfaceEndpoints' | 'stage'>;

export function readSettings(node: Node): PlatformSettings {
  const text = (key: TextKey, required: boolean): string => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') {
      if (required) throw new Error(`CDK context "${key}" is required (set it in cdk.json or pass -c ${key}=...)`);
      return '';
    }
    if (typeof value !== 'string') throw new Error(`CDK context "${key}" must be a string`);
    return value.trim();
  };
  // `-c key=value` always gives strings; cdk.json gives JSON numbers and booleans.
  const natGateways = Number(node.tryGetContext('natGateways') ?? 1);
  const endpoints = String(node.tryGetContext('awsInterfaceEndpoints') ?? false);
  const stage = readStage(node);
  const settings: PlatformSettings = {
    stage,
    appUrl: text('appUrl', false),
    adminEmails: text('adminEmails', false),
    testerEmails: text('testerEmails', false),
    runtimeImage: text('runtimeImage', false),
    agentDomain: text('agentDomain', true),
    agentHostedZoneId: text('agentHostedZoneId', false),
    agentHostedZoneName: text('agentHostedZoneName', false),
    agentCertificateArn: text('agentCertificateArn', false),
    natGateways,
    awsInterfaceEndpoints: endpoints === 'true',
    emailIdentityArn: text('emailIdentityArn', false),
    alarmEmail: text('alarmEmail', false),
    alarmWebhookUrl: text('alarmWebhookUrl', false),
  };
  // Fail at synth rather than at the first cold start (platform/config.ts parses the same values).
  if (settings.appUrl && !URL.canParse(settings.appUrl)) throw new Error(`CDK context "appUrl" is not a URL: ${settings.appUrl}`);
  for (const key of ['adminEmails', 'testerEmails', 'alarmEmail'] as const) {
    const bad = settings[key]
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e && !/^[^@\s]+@[^@\s]+$/.test(e));
    if (bad.length) throw new Error(`CDK context "${key}" holds something that is not an email: ${bad.join(', ')}`);
  }
  const badUrl = settings.alarmWebhookUrl
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u && !(URL.canParse(u) && new URL(u).protocol === 'https:'));
  if (badUrl.length) throw new Error(`CDK context "alarmWebhookUrl" holds something that is not an HTTPS URL: ${badUrl.join(', ')}`);
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(settings.agentDomain)) throw new Error(`CDK context "agentDomain" is not a domain name: ${settings.agentDomain}`);
  if (settings.agentHostedZoneId && !/^Z[A-Z0-9]{1,31}$/.test(settings.agentHostedZoneId))
    throw new Error(`CDK context "agentHostedZoneId" is not a Route 53 hosted zone id: ${settings.agentHostedZoneId}`);
  if (settings.agentHostedZoneName && !settings.agentHostedZoneId) throw new Error('CDK context "agentHostedZoneName" needs agentHostedZoneId');
  const zoneName = settings.agentHostedZoneName || settings.agentDomain;
  if (settings.agentHostedZoneId && settings.agentDomain !== zoneName && !settings.agentDomain.endsWith(`.${zoneName}`))
    throw new Error(`CDK context "agentDomain" (${settings.agentDomain}) is not inside the hosted zone ${zoneName}`);
  if (settings.agentCertificateArn && !/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/.test(settings.agentCertificateArn))
    throw new Error(`CDK context "agentCertificateArn" is not an ACM certificate ARN: ${settings.agentCertificateArn}`);
  if (![1, 2].includes(natGateways)) throw new Error('CDK context "natGateways" must be 1 or 2');
  if (!['true', 'false'].includes(endpoints)) throw new Error('CDK context "awsInterfaceEndpoints" must be true or false');
  // After the zone check: the zone holds the parent domain, which holds the stage's.
  if (settings.agentHostedZoneId) settings.agentHostedZoneName = zoneName;
  settings.agentDomain = stagedDomain(stage, settings.agentDomain);
  const badArn = settings.emailIdentityArn
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a && !/^arn:aws[\w-]*:ses:[\w-]+:\d{12}:identity\/\S+$/.test(a));
  if (badArn.length) throw new Error(`CDK context "emailIdentityArn" holds something that is not an SES identity ARN: ${badArn.join(', ')}`);
  return settings;
}

/**
 * The SES identities accounts may send as. SES authorises the From address against the identity that
 * verified it: the address itself or its domain, so both are allowed. In the SES sandbox every
 * recipient is checked too: list their identities in emailIdentityArn until production access.
 */
export function emailIdentityArns(stack: Stack, settings: PlatformSettings, operator: OperatorSettings): string[] {
  if (settings.emailIdentityArn)
    return settings.emailIdentityArn
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
  const from = operator.plain.EMAIL_FROM;
  if (!from) throw new Error('settings.EMAIL_FROM is required: the SES-verified sender of account email (or give emailIdentityArn)');
  const address = (/<([^<>\s]+)>\s*$/.exec(from)?.[1] ?? from).trim();
  const domain = /^[^@\s<>]+@([^@\s<>]+)$/.exec(address)?.[1];
  if (!domain) throw new Error(`settings.EMAIL_FROM is not an email address: ${from}`);
  return [address, domain].map((identity) => stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }));
}

/** The whole platform of docs/architecture.md §1 in one stack. */
export class PlatformStack extends Stack {
  /** The HTTP API, which the web console's distribution (lib/constructs/web-console.ts) also serves under /api/*. */
  readonly api: Api;
  /** The agents' parent domain of this stage (the console's content security policy admits its websockets). */
  readonly agentDomain: string;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const settings = readSettings(this.node);
    const operator = readOperatorSettings(this.node);
    const functionList = platformFunctions(contract);
    checkRoutes(functionList);
    this.agentDomain = settings.agentDomain;
    const concurrency = readConcurrency(this.node, concurrencyFunctions(contract), QUEUE_CONSUMERS);

    const data = new DataTable(this, 'Data');
    const queues = new Queues(this, 'Queues', {
      provisioning: { consumerTimeout: PROVISIONER_TIMEOUT, deadLetterConsumerTimeout: PROVISIONER_DLQ_TIMEOUT },
      events: { consumerTimeout: WEBHOOK_DELIVERY_TIMEOUT },
    });
    const keys = new Keys(this, 'Keys');
    const secrets = new Secrets(this, 'Secrets');
    const compute = new Compute(this, 'Compute', {
      runtimeImage: settings.runtimeImage,
      projectRoot: PROJECT_ROOT,
      dataKey: keys.dataKey,
      natGateways: settings.natGateways,
      interfaceEndpoints: settings.awsInterfaceEndpoints,
    });
    const api = new Api(this, 'Api', { stage: settings.stage });
    this.api = api;
    const files = new FileBucket(this, 'Files');

    /** What every function reads. */
    const common = {
      STAGE: 'aws',
      TABLE_NAME: data.table.tableName,
      APP_URL: settings.appUrl || api.url,
      ADMIN_EMAILS: settings.adminEmails,
      TESTER_EMAILS: settings.testerEmails,
      // The task definition's own image, so launches of the default image use it unchanged.
      RUNTIME_IMAGE: compute.runtimeImageName,
      AGENT_DOMAIN: settings.agentDomain,
    };
    /** A resource's address goes only where the permissions table grants its use. */
    const byNeed: Partial<Record<Need, Record<string, string>>> = {
      sendProvisioning: { PROVISIONING_QUEUE_URL: queues.provisioning.queue.queueUrl },
      sendEvents: { EVENTS_QUEUE_URL: queues.events.queue.queueUrl },
      dataKey: { KMS_KEY_ID: keys.dataKey.keyArn },
      launchTasks: {
        KMS_KEY_ID: keys.dataKey.keyArn,
        ECS_CLUSTER_ARN: compute.cluster.clusterArn,
        ECS_TASK_DEFINITION_ARN: compute.taskDefinition.taskDefinitionArn,
        ECS_SUBNET_IDS: compute.subnetIds().join(','),
        ECS_SECURITY_GROUP_IDS: compute.securityGroup.securityGroupId,
      },
      stopTasks: { ECS_CLUSTER_ARN: compute.cluster.clusterArn },
      fileBucket: { FILE_STORAGE: 's3', FILES_BUCKET: files.bucket.bucketName },
      readRuntimeLogs: { RUNTIME_LOG_GROUP: compute.runtimeLogGroup.logGroupName },
    };
    // Runtimes reach the platform API by its own URL unless the operator routes them elsewhere.
    const settingDefaults = { RUNTIME_PLATFORM_URL: api.url };
    const environmentOf = (fn: FunctionIdentity) => ({
      ...common,
      // The JWT key stays out of the workers: only the request pipeline signs or checks sessions.
      ...(fn.http ? { JWT_SECRET: secrets.jwtSecretReference() } : {}),
      ...Object.assign({}, ...needsOf(fn.name).map((need) => byNeed[need] ?? {})),
      ...settingsEnvironment(fn, operator, (name) => secrets.operatorReference(name), settingDefaults),
    });

    const functions = new Functions(this, 'Functions', {
      contract,
      projectRoot: PROJECT_ROOT,
      environmentOf,
      networkOf: (name) =>
        needsOf(name).includes('reachInstances')
          ? { vpc: compute.vpc, subnets: compute.functionSubnets, securityGroup: compute.functionsSecurityGroup }
          : undefined,
      queues,
      clusterArn: compute.cluster.clusterArn,
      concurrency,
    });

    api.addContractRoutes(
      contract,
      (group) => {
        const fn = functions.http.get(group);
        if (!fn) throw new Error(`no function for contract group ${group}`);
        return fn;
      },
      functions.home,
    );

    const grantTargets = {
      table: data.table,
      provisioningQueue: queues.provisioning.queue,
      eventsQueue: queues.events.queue,
      dataKey: keys.dataKey,
      compute,
      emailIdentityArns: emailIdentityArns(this, settings, operator),
      filesBucket: files.bucket,
    };
    applyGrants(functions.byName, grantTargets);
    for (const [group, fn] of functions.streaming) grantNeedsOf(group, fn, grantTargets);

    // EDGE_PORT is the stack's to set: the container port, the target group's and the process's must agree.
    const edgePort = DEFAULT_EDGE_PORT;
    const wakeWait = operator.plain.WAKE_WAIT_SECONDS ?? declaredDefault('WAKE_WAIT_SECONDS');
    const edge = new Edge(this, 'Edge', {
      vpc: compute.vpc,
      cluster: compute.cluster,
      agentDomain: settings.agentDomain,
      hostedZone: settings.agentHostedZoneId ? { id: settings.agentHostedZoneId, name: settings.agentHostedZoneName || settings.agentDomain } : undefined,
      certificateArn: settings.agentCertificateArn || undefined,
      projectRoot: PROJECT_ROOT,
      port: edgePort,
      environment: {
        STAGE: 'aws',
        TABLE_NAME: data.table.tableName,
        AGENT_DOMAIN: settings.agentDomain,
        EDGE_PORT: String(edgePort),
        ...(wakeWait !== undefined && { WAKE_WAIT_SECONDS: wakeWait }),
        KMS_KEY_ID: keys.dataKey.keyArn,
        PROVISIONING_QUEUE_URL: queues.provisioning.queue.queueUrl,
        // A wake writes lifecycle events, whose webhooks go on the events queue; plan rights need the admin lists.
        EVENTS_QUEUE_URL: queues.events.queue.queueUrl,
        ADMIN_EMAILS: settings.adminEmails,
        TESTER_EMAILS: settings.testerEmails,
      },
      runtimeSecurityGroup: compute.securityGroup,
      runtimePort: RUNTIME_PORT,
      interfaceEndpoints: compute.interfaceEndpoints,
    });
    grantEdge(edge.taskDefinition.taskRole, grantTargets);

    const monitoring = new Monitoring(this, 'Monitoring', {
      httpApi: api.httpApi,
      // The streaming twins fail and throttle like any function: watched under their own names.
      functions: new Map([...functions.byName, ...[...functions.streaming].map(([group, fn]) => [streamingName(group), fn] as const)]),
      deadLetterQueues: {
        provisioning: queues.provisioning.deadLetterQueue,
        events: queues.events.deadLetterQueue,
        asyncInvocations: functions.asyncDeadLetters,
      },
      provisioningQueue: queues.provisioning.queue,
      table: data.table,
      edge: { loadBalancer: edge.loadBalancer, targetGroup: edge.targetGroup },
      alarmEmail: settings.alarmEmail || undefined,
      alarmWebhookUrl: settings.alarmWebhookUrl || undefined,
    });

    acknowledgeByDesign(this, { api, functions, compute, table: data.table, queues, secrets, monitoring, filesBucket: files.bucket, edge });

    new CfnOutput(this, 'ApiUrl', { value: api.url, description: 'Base URL of the platform API' });
    new CfnOutput(this, 'AgentEdgeDns', {
      value: edge.loadBalancer.loadBalancerDnsName,
      description: `The agent edge's load balancer: *.${settings.agentDomain} points here (an alias record when agentHostedZoneId is set)`,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: monitoring.topic.topicArn,
      description: 'Every alarm notifies this SNS topic: subscribe mail, a paging service or a chat integration to it',
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${monitoring.dashboard.dashboardName}`,
      description: "The platform's CloudWatch dashboard: traffic, launches, heartbeats, payments and every alarm",
    });
    this.addStreamingUrls(functions.streaming, streamingOrigins(settings, operator), concurrency);
  }

  /**
   * API Gateway HTTP APIs buffer a function's answer, so the groups that stream server-sent events
   * are also reachable at a Function URL in response-streaming mode. Auth NONE: the pipeline
   * authenticates every request itself, exactly as behind API Gateway, and browsers and SDKs call
   * it unsigned. The URL bypasses the API stage's throttle, so it gets its own: the twin's reserved
   * concurrency, past which Lambda answers 429 before any code runs (docs/architecture.md, guard
   * rails). A twin without a reservation gets no URL: its routes stay on the API URL, buffered.
   */
  private addStreamingUrls(streaming: ReadonlyMap<string, IFunction>, allowedOrigins: string[], concurrency: Concurrency) {
    for (const [group, fn] of streaming) {
      if (!concurrency.reserved.has(streamingName(group))) {
        Annotations.of(this).addWarningV2(
          'platform:streaming-url-off',
          `${group}: no Function URL, as streaming concurrency is off; its streams answer buffered on the API URL`,
        );
        continue;
      }
      const url = fn.addFunctionUrl({
        authType: FunctionUrlAuthType.NONE,
        invokeMode: InvokeMode.RESPONSE_STREAM,
        ...(allowedOrigins.length && {
          cors: {
            allowedOrigins,
            allowedMethods: [HttpMethod.ALL],
            allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Plugin-Id', 'X-Payment-Method', 'X-CSRF-Token'],
            exposedHeaders: ['Payment-Receipt', 'WWW-Authenticate', 'x-plugin-id', 'x-request-id'],
          },
        }),
      });
      new CfnOutput(this, `${pascalCase(group)}StreamingUrl`, {
        value: url.url,
        description: `Streams the ${group} routes' server-sent events as they come (same paths as the API URL, which buffers them)`,
      });
    }
  }
}

/** Origins a browser may stream from: GATEWAY_ALLOWED_ORIGINS, else the app URL; none when neither is set. */
function streamingOrigins(settings: PlatformSettings, operator: OperatorSettings): string[] {
  const listed = (operator.plain.GATEWAY_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (listed.length) return listed;
  return settings.appUrl ? [new URL(settings.appUrl).origin] : [];
}
