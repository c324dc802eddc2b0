import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import { Cluster, ContainerImage, ContainerInsights, CpuArchitecture, FargateTaskDefinition, LogDrivers, OperatingSystemFamily } from 'aws-cdk-lib/aws-ecs';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BOOTSTRAP_PURPOSE } from '../permissions';

/** The port the agent runtime listens on (HTTP and websocket). */
export const RUNTIME_PORT = 8080;

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
 * - Tasks: one Fargate task per user in the PUBLIC subnets with a public IP, for their outbound
 *   calls (image pull, the platform API) without NAT data charges. Their security group admits the
 *   runtime port ONLY from the functions' security group: nothing on the internet reaches a task.
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

  constructor(scope: Construct, id: string, props: ComputeProps) {
    super(scope, id);
    if (![1, 2].includes(props.natGateways)) throw new Error('natGateways must be 1 or 2: the functions in the VPC need egress');
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
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
        : ContainerImage.fromAsset(props.projectRoot, { file: 'runtime/Dockerfile', platform: Platform.LINUX_ARM64 }),
      essential: true,
      portMappings: [{ containerPort: RUNTIME_PORT }],
      logging: LogDrivers.awsLogs({ logGroup: this.runtimeLogGroup, streamPrefix: 'runtime' }),
    });
    this.runtimeImageName = container.imageName;

    this.securityGroup = new SecurityGroup(this, 'RuntimeSecurityGroup', {
      vpc: this.vpc,
      description: 'Agent runtime tasks: runtime port from the platform functions only',
      allowAllOutbound: true,
    });
    this.securityGroup.addIngressRule(this.functionsSecurityGroup, Port.tcp(RUNTIME_PORT), 'platform functions to the agent runtime');
  }

  /** The roles RunTask passes to ECS: the only ones the launching functions may pass. */
  passableRoleArns(): string[] {
    return [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn];
  }

  /** Where tasks start (ECS_SUBNET_IDS). */
  subnetIds(): string[] {
    return this.vpc.publicSubnets.map((s) => s.subnetId);
  }
}
