import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  type InterfaceVpcEndpoint,
  InterfaceVpcEndpointAwsService,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import { Duration } from 'aws-cdk-lib';
import {
  Cluster,
  ContainerImage,
  type HealthCheck,
  ContainerInsights,
  CpuArchitecture,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BOOTSTRAP_PURPOSE } from '../permissions';

/**
 * The repository's .dockerignore admits what either image's build copies (the runtime's and the
 * edge's); the runtime image's context is narrowed back to runtime/Dockerfile's own copies, so a
 * change to the platform's code does not rebuild the agents' image.
 */
export const RUNTIME_CONTEXT_EXCLUDES = ['platform/', 'adapters/', 'data/', 'domain/', 'http/', 'edge/', 'contract/*', '!contract/sse.ts'];

/** Zones of the VPC: every subnet tier, and the agent edge's load balancer, spans this many. */
export const AVAILABILITY_ZONES = 2;

/** The port the agent runtime listens on (HTTP and websocket). */
export const RUNTIME_PORT = 8080;

/** The task's writable scratch space (the root filesystem is read-only), mounted at /tmp. */
export const RUNTIME_SCRATCH_VOLUME = 'tmp';

/** The container health check of the default runtime image: the unauthenticated liveness route. */
export const RUNTIME_HEALTH_CHECK: HealthCheck = {
  command: ['CMD', 'node', '-e', `fetch('http://127.0.0.1:${RUNTIME_PORT}/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`],
  interval: Duration.seconds(30),
  timeout: Duration.seconds(5),
  startPeriod: Duration.seconds(30),
  retries: 3,
};

export interface ComputeProps {
  /**
   * Container image of the agent runtime: empty builds runtime/Dockerfile as an image asset (the
   * default); a registry image (CDK context `runtimeImage`) replaces it.
   */
  runtimeImage: string;
  /** Repository root: the build context of runtime/Dockerfile (.dockerignore there keeps it small). */
  projectRoot: string;
  /** The key that wraps the gateway token each task receives encrypted. */
  dataKey: IKey;
  /** NAT gateways of the functions' private subnets (CDK context `natGateways`, 1 or 2). */
  natGateways: number;
  /** Interface endpoints for SQS, KMS and ECS in the private subnets (CDK context `awsInterfaceEndpoints`). */
  interfaceEndpoints: boolean;
}

/**
 * Where agent instances run, and the network between them and the platform.
 *
 * - Tasks: one Fargate task per user in the PRIVATE subnets, without a public IP; their outbound
 *   calls (image pull, the platform API, the model provider) leave through the NAT. Their security
 *   group admits the runtime port from two sources only: the agent edge's tasks (lib/constructs/edge.ts),
 *   which carry every request from the agent's URL, and the functions' security group, because the
 *   platform's own functions still call an instance directly (its /health for the heartbeat, stats,
 *   config reloads, memory pushes and POST /api/chat relaying to the instance's chat).
 * - Functions that talk to instances (NEEDS `reachInstances`: provisioner, heartbeat, task-events,
 *   agents, instance) run in the PRIVATE subnets: the launcher reports a task's private IP, and a
 *   Lambda in a VPC has no public IP, so private subnets with a NAT are how they keep reaching AWS
 *   and the internet (the instance function calls the model provider, MODEL_API_BASE_URL).
 * - Cost (us-east-1 list prices): one NAT gateway ≈ $33/month + $0.045/GB; the DynamoDB gateway
 *   endpoint is free and keeps the heaviest traffic off the NAT. Interface endpoints for SQS, KMS
 *   and ECS would cost ≈ $44/month more in two AZs ($0.01/h per endpoint per AZ) and remove no need
 *   for the NAT, so they are opt-in (`awsInterfaceEndpoints`) for operators who want AWS API calls to
 *   stay off the NAT. `natGateways: 2` buys a NAT per AZ (≈ $66/month) against an AZ outage.
 */
export class Compute extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  readonly securityGroup: SecurityGroup;
  /** The image the runtime container runs (RUNTIME_IMAGE of the functions, the default approved image). */
  readonly runtimeImageName: string;
  /** Where the runtime tasks' stdout and stderr go (awslogs); the per-agent log reads it. */
  readonly runtimeLogGroup: LogGroup;
  /** Carried by the functions that reach instances; the only source the tasks admit. */
  readonly functionsSecurityGroup: SecurityGroup;
  readonly functionSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };
  /**
   * The SQS, KMS and ECS endpoints when `awsInterfaceEndpoints` is on. With private DNS they answer
   * for those services in the whole private tier, so every caller there is admitted: the functions,
   * the runtime tasks (the bootstrap token's KMS decrypt) and the edge (lib/constructs/edge.ts).
   */
  readonly interfaceEndpoints: InterfaceVpcEndpoint[] = [];

  constructor(scope: Construct, id: string, props: ComputeProps) {
    super(scope, id);
    if (![1, 2].includes(props.natGateways)) throw new Error('natGateways must be 1 or 2: the functions in the VPC need egress');
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: AVAILABILITY_ZONES,
      natGateways: props.natGateways,
      // Public first: adding the private tier left the public subnets' CIDRs as they were.
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
      ],
      gatewayEndpoints: { DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB, subnets: [this.functionSubnets] } },
    });
    // Rejected traffic only: what an investigation of a probe or a misrouted call needs, at a fraction of the volume.
    this.vpc.addFlowLog('RejectedTraffic', {
      destination: FlowLogDestination.toCloudWatchLogs(new LogGroup(this, 'FlowLogs', { retention: RetentionDays.ONE_MONTH })),
      trafficType: FlowLogTrafficType.REJECT,
    });

    this.functionsSecurityGroup = new SecurityGroup(this, 'FunctionsSecurityGroup', {
      vpc: this.vpc,
      description: 'Agent platform functions that talk to instances',
      allowAllOutbound: true,
    });
    if (props.interfaceEndpoints) {
      for (const [id, service] of [
        ['Sqs', InterfaceVpcEndpointAwsService.SQS],
        ['Kms', InterfaceVpcEndpointAwsService.KMS],
        ['Ecs', InterfaceVpcEndpointAwsService.ECS],
      ] as const) {
        const endpoint = this.vpc.addInterfaceEndpoint(id, { service, subnets: this.functionSubnets, privateDnsEnabled: true, open: false });
        endpoint.connections.allowFrom(this.functionsSecurityGroup, Port.tcp(443), 'platform functions');
        this.interfaceEndpoints.push(endpoint);
      }
    }

    this.cluster = new Cluster(this, 'Cluster', { vpc: this.vpc, containerInsightsV2: ContainerInsights.ENABLED });

    this.taskDefinition = new FargateTaskDefinition(this, 'RuntimeTask', {
      cpu: 512,
      memoryLimitMiB: 1024,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    // The task role's only right: decrypt the gateway token the provisioner encrypted for its bootstrap
    // (adapters/launcher-ecs.ts). The condition keeps it from opening any other envelope (wallet
    // keys, other secrets) under the same key; it never gets table, queue or secret access (docs/architecture.md §2).
    this.taskDefinition.taskRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [props.dataKey.keyArn],
        conditions: { StringEquals: { 'kms:EncryptionContext:purpose': BOOTSTRAP_PURPOSE } },
      }),
    );
    this.runtimeLogGroup = new LogGroup(this, 'RuntimeLogs', { retention: RetentionDays.ONE_MONTH });
    // Container name and stream prefix make the stream names the per-agent log reads
    // (RUNTIME_CONTAINER_NAME, RUNTIME_LOG_STREAM_PREFIX in adapters/runtime-logs-cloudwatch.ts; an infra test checks they agree).
    const container = this.taskDefinition.addContainer('runtime', {
      image: props.runtimeImage
        ? ContainerImage.fromRegistry(props.runtimeImage)
        : ContainerImage.fromAsset(props.projectRoot, { file: 'runtime/Dockerfile', platform: Platform.LINUX_ARM64, exclude: RUNTIME_CONTEXT_EXCLUDES }),
      essential: true,
      portMappings: [{ containerPort: RUNTIME_PORT }],
      logging: LogDrivers.awsLogs({ logGroup: this.runtimeLogGroup, streamPrefix: 'runtime' }),
      // The runtime writes no file of its own; anything a library needs to spill goes to /tmp below.
      readonlyRootFilesystem: true,
      // ECS replaces a task whose process stops answering. /livez needs no token (runtime/routes.ts);
      // the check runs node, which the default image has: a registry image keeps its own HEALTHCHECK.
      ...(!props.runtimeImage && { healthCheck: RUNTIME_HEALTH_CHECK }),
    });
    this.taskDefinition.addVolume({ name: RUNTIME_SCRATCH_VOLUME });
    container.addMountPoints({ sourceVolume: RUNTIME_SCRATCH_VOLUME, containerPath: '/tmp', readOnly: false });
    this.runtimeImageName = container.imageName;

    this.securityGroup = new SecurityGroup(this, 'RuntimeSecurityGroup', {
      vpc: this.vpc,
      // The description is the group's identity in EC2 (changing it replaces the group): the agent edge is admitted beside the functions.
      description: 'Agent runtime tasks: runtime port from the platform functions only',
      allowAllOutbound: true,
    });
    // The functions call instances directly (health, stats, config reload, memory push, the chat relay), not through the edge.
    this.securityGroup.addIngressRule(this.functionsSecurityGroup, Port.tcp(RUNTIME_PORT), 'platform functions to the agent runtime');
    for (const endpoint of this.interfaceEndpoints) endpoint.connections.allowFrom(this.securityGroup, Port.tcp(443), 'agent runtime tasks');
  }

  /** The roles RunTask passes to ECS: the only ones the launching functions may pass. */
  passableRoleArns(): string[] {
    return [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn];
  }

  /** Where tasks start (ECS_SUBNET_IDS): the private subnets, which reach out through the NAT. */
  subnetIds(): string[] {
    return this.vpc.selectSubnets(this.functionSubnets).subnetIds;
  }
}
