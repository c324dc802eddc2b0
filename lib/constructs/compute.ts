import { Port, Peer, SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import {
  Cluster,
  ContainerImage,
  ContainerInsights,
  CpuArchitecture,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** The port the agent runtime listens on (HTTP and websocket). */
export const RUNTIME_PORT = 8080;

export interface ComputeProps {
  /** Container image of the agent runtime (CDK context `runtimeImage`). */
  runtimeImage: string;
}

/**
 * Where agent instances run: one Fargate task per user, launched by the provisioner.
 * Public subnets only and no NAT gateway: a NAT costs more per month than a small fleet of tasks,
 * so each task gets a public IP for its outbound calls and its agent URL.
 */
export class Compute extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  readonly securityGroup: SecurityGroup;

  constructor(scope: Construct, id: string, props: ComputeProps) {
    super(scope, id);
    this.vpc = new Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
    });

    this.cluster = new Cluster(this, 'Cluster', { vpc: this.vpc, containerInsightsV2: ContainerInsights.ENABLED });

    // The task role gets no policy at all: the runtime reaches the platform over HTTP with its own
    // gateway token and never holds platform secrets or table access (DESIGN.md section 3).
    this.taskDefinition = new FargateTaskDefinition(this, 'RuntimeTask', {
      cpu: 512,
      memoryLimitMiB: 1024,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.ARM64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    const logGroup = new LogGroup(this, 'RuntimeLogs', { retention: RetentionDays.ONE_MONTH });
    this.taskDefinition.addContainer('runtime', {
      image: ContainerImage.fromRegistry(props.runtimeImage),
      essential: true,
      portMappings: [{ containerPort: RUNTIME_PORT }],
      logging: LogDrivers.awsLogs({ logGroup, streamPrefix: 'runtime' }),
    });

    this.securityGroup = new SecurityGroup(this, 'RuntimeSecurityGroup', {
      vpc: this.vpc,
      description: 'Agent runtime tasks: agent HTTP and websocket port',
      allowAllOutbound: true,
    });
    // No load balancer in front: clients and the heartbeat reach each task on its public IP, and the
    // runtime refuses any request without the agent's gateway token.
    this.securityGroup.addIngressRule(Peer.anyIpv4(), Port.tcp(RUNTIME_PORT), 'agent runtime');
  }

  /** The roles RunTask passes to ECS: the only ones the launching functions may pass. */
  passableRoleArns(): string[] {
    return [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn];
  }

  subnetIds(): string[] {
    return this.vpc.publicSubnets.map((s) => s.subnetId);
  }
}
