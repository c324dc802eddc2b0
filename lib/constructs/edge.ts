import { CfnMapping, CfnResource, Duration, NestedStack, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { AccountPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Port, SecurityGroup, SubnetType, type InterfaceVpcEndpoint, type ISecurityGroup, type IVpc } from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { ContainerImage, CpuArchitecture, FargateService, FargateTaskDefinition, LogDrivers, OperatingSystemFamily, type ICluster } from 'aws-cdk-lib/aws-ecs';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ApplicationTargetGroup,
  ListenerAction,
  SslPolicy,
  TargetType,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget, type IHostedZone } from 'aws-cdk-lib/aws-route53';
import { LoadBalancerTarget } from 'aws-cdk-lib/aws-route53-targets';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { EDGE_CONTEXT_PATHS, EDGE_DOCKERFILE } from '#build/edge-bundle';

/** Where the edge listens in its container (the EDGE_PORT setting of the edge process). */
export const DEFAULT_EDGE_PORT = 8080;
/** What the load balancer asks each edge task (the edge answers it without touching an instance). */
export const EDGE_HEALTH_PATH = '/_edge/health';
/**
 * The load balancer closes a connection idle this long; a websocket to an agent may sit silent for
 * a long time between turns, so it is the longest ALB allows in whole hours.
 */
export const EDGE_IDLE_TIMEOUT = Duration.seconds(3600);
/** Two tasks, one per zone, always; more under load. */
export const EDGE_SCALING = { minCapacity: 2, maxCapacity: 10, cpuPercent: 60, requestsPerTargetPerMinute: 3000 } as const;
/** Each edge task's Fargate size (ARM64): the edge holds connections, not work. */
export const EDGE_TASK_SIZE = { cpu: 512, memoryLimitMiB: 1024 } as const;
/**
 * How long a task being replaced keeps its connections: on SIGTERM the edge closes its websockets
 * with 1012 (clients reconnect to a new task) and finishes the requests in flight.
 */
export const EDGE_DRAIN = Duration.seconds(60);

export interface EdgeProps {
  vpc: IVpc;
  cluster: ICluster;
  /** The parent domain of the agents' subdomains (`<subdomain>.<agentDomain>`). */
  agentDomain: string;
  /** Route 53 hosted zone that holds agentDomain: validates the certificate and takes the wildcard record. */
  hostedZone?: { id: string; name: string };
  /** An ACM certificate covering `*.<agentDomain>` in the stack's region; replaces the one the stack would request. */
  certificateArn?: string;
  /** Repository root: the build context of edge/Dockerfile. */
  projectRoot: string;
  /** Container settings of the edge process (platform/config.ts names). */
  environment: Record<string, string>;
  port: number;
  /** The agent runtime tasks' security group: it admits the edge on the runtime port. */
  runtimeSecurityGroup: ISecurityGroup;
  runtimePort: number;
  /** The VPC's interface endpoints (when the operator enabled them): the edge calls KMS and SQS through them. */
  interfaceEndpoints: readonly InterfaceVpcEndpoint[];
}

/**
 * The agent edge in AWS: `https://<subdomain>.<agentDomain>` (HTTP, server-sent events, websockets)
 * reaches an Application Load Balancer, which forwards to the edge's Fargate tasks in the private
 * subnets; each edge task checks the agent's gateway token and proxies to the instance's private
 * address (edge/). Its own nested stack: every resource here is new and stateless but the access
 * log bucket, and none of it counts against the main stack's budget.
 */
export class Edge extends NestedStack {
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly targetGroup: ApplicationTargetGroup;
  readonly service: FargateService;
  readonly taskDefinition: FargateTaskDefinition;
  readonly securityGroup: SecurityGroup;
  readonly certificate: ICertificate;
  readonly accessLogs: Bucket;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id, { description: 'Agent platform: the agent edge (load balancer, certificate, DNS, edge service)' });
    const zone: IHostedZone | undefined = props.hostedZone
      ? HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: props.hostedZone.id, zoneName: props.hostedZone.name })
      : undefined;
    const wildcard = `*.${props.agentDomain}`;
    // Without a zone the certificate waits for its validation CNAME, which the operator adds where
    // the domain's DNS is served (CloudFormation's events show the record).
    this.certificate = props.certificateArn
      ? Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn)
      : new Certificate(this, 'Certificate', { domainName: wildcard, validation: CertificateValidation.fromDns(zone) });

    this.accessLogs = new Bucket(this, 'AccessLogs', {
      // ALB writes its logs with SSE-S3 only.
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(30) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const lbSecurityGroup = new SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: props.vpc,
      description: 'Agent edge load balancer: HTTPS and the HTTP redirect from anywhere',
      allowAllOutbound: false,
    });
    this.loadBalancer = new ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      internetFacing: true,
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
      securityGroup: lbSecurityGroup,
      idleTimeout: EDGE_IDLE_TIMEOUT,
      dropInvalidHeaderFields: true,
    });
    this.logAccess('edge');

    this.securityGroup = new SecurityGroup(this, 'EdgeSecurityGroup', {
      vpc: props.vpc,
      description: 'Agent edge tasks: edge port from the load balancer only',
      // Out to the instances, DynamoDB, KMS, SQS and the image registry.
      allowAllOutbound: true,
    });
    // The only path from the internet to an agent: load balancer, then edge, then the runtime port.
    props.runtimeSecurityGroup.connections.allowFrom(this.securityGroup, Port.tcp(props.runtimePort), 'the agent edge to the agent runtime');
    for (const endpoint of props.interfaceEndpoints) endpoint.connections.allowFrom(this.securityGroup, Port.tcp(443), 'the agent edge');

    this.taskDefinition = new FargateTaskDefinition(this, 'Task', {
      ...EDGE_TASK_SIZE,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    this.taskDefinition.addContainer('edge', {
      image: ContainerImage.fromAsset(props.projectRoot, {
        file: EDGE_DOCKERFILE,
        platform: Platform.LINUX_ARM64,
        // The repository's .dockerignore admits both images' contexts; the edge's build reads these paths only.
        exclude: ['runtime/', ...EDGE_CONTEXT_PATHS.map((p) => `!${p}`)],
      }),
      essential: true,
      portMappings: [{ containerPort: props.port }],
      environment: props.environment,
      logging: LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: 'edge' }),
      stopTimeout: EDGE_DRAIN,
    });

    this.service = new FargateService(this, 'Service', {
      cluster: props.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: EDGE_SCALING.minCapacity,
      // A deploy starts the new tasks before it drains the old ones, and rolls back if they never get healthy.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      // Private subnets in both zones (ECS spreads the tasks across them), no public address.
      vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
      assignPublicIp: false,
      securityGroups: [this.securityGroup],
      healthCheckGracePeriod: Duration.seconds(30),
    });

    this.targetGroup = new ApplicationTargetGroup(this, 'Targets', {
      vpc: props.vpc,
      port: props.port,
      protocol: ApplicationProtocol.HTTP,
      targetType: TargetType.IP,
      targets: [this.service],
      deregistrationDelay: EDGE_DRAIN,
      healthCheck: { path: EDGE_HEALTH_PATH, port: String(props.port), healthyHttpCodes: '200', interval: Duration.seconds(10), healthyThresholdCount: 2 },
    });
    this.loadBalancer.addListener('Https', {
      port: 443,
      protocol: ApplicationProtocol.HTTPS,
      certificates: [this.certificate],
      sslPolicy: SslPolicy.RECOMMENDED_TLS,
      defaultAction: ListenerAction.forward([this.targetGroup]),
    });
    this.loadBalancer.addListener('HttpRedirect', {
      port: 80,
      protocol: ApplicationProtocol.HTTP,
      defaultAction: ListenerAction.redirect({ protocol: 'HTTPS', port: '443', permanent: true }),
    });

    const scaling = this.service.autoScaleTaskCount({ minCapacity: EDGE_SCALING.minCapacity, maxCapacity: EDGE_SCALING.maxCapacity });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: EDGE_SCALING.cpuPercent });
    // Every new connection is a request (a websocket upgrade too), so this tracks connections per task.
    scaling.scaleOnRequestCount('Connections', { requestsPerTarget: EDGE_SCALING.requestsPerTargetPerMinute, targetGroup: this.targetGroup });

    if (zone) {
      new ARecord(this, 'Wildcard', {
        zone,
        recordName: wildcard,
        target: RecordTarget.fromAlias(new LoadBalancerTarget(this.loadBalancer)),
        comment: 'Every agent subdomain to the agent edge',
      });
    }
  }

  /**
   * Access logs of the load balancer in the bucket. CDK's `logAccessLogs` needs the region to name
   * the account Elastic Load Balancing writes from; an environment-agnostic synthesis (the tests)
   * looks it up at deploy time in a mapping of CDK's own region table instead.
   */
  private logAccess(prefix: string) {
    const stack = Stack.of(this);
    if (!Token.isUnresolved(stack.region)) {
      this.loadBalancer.logAccessLogs(this.accessLogs, prefix);
      return;
    }
    const accounts = new CfnMapping(this, 'LoadBalancingAccounts', {
      mapping: Object.fromEntries(RegionInfo.regions.flatMap((r) => (r.elbv2Account ? [[r.name, { account: r.elbv2Account }]] : []))),
    });
    this.loadBalancer.setAttribute('access_logs.s3.enabled', 'true');
    this.loadBalancer.setAttribute('access_logs.s3.bucket', this.accessLogs.bucketName);
    this.loadBalancer.setAttribute('access_logs.s3.prefix', prefix);
    this.accessLogs.addToResourcePolicy(
      new PolicyStatement({
        actions: ['s3:PutObject'],
        principals: [new AccountPrincipal(accounts.findInMap(stack.region, 'account'))],
        resources: [this.accessLogs.arnForObjects(`${prefix}/AWSLogs/${stack.account}/*`)],
      }),
    );
    const policy = this.accessLogs.policy?.node.defaultChild;
    if (policy instanceof CfnResource) (this.loadBalancer.node.defaultChild as CfnResource).addResourceDependency(policy);
  }
}
