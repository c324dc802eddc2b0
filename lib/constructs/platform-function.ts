import { join } from 'node:path';
import { type Duration, Stack } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LAMBDA_ENTRY_NAME } from '#build/bundling';
import { FunctionBundles } from './function-bundles';
import { LAMBDA_MEMORY_MB } from '../function-sizing';
import { handlerPath } from '#contract/functions';

/** Where a function that talks to instances sits in the VPC. */
export interface FunctionNetwork {
  vpc: IVpc;
  subnets: SubnetSelection;
  securityGroup: ISecurityGroup;
}

export interface PlatformFunctionProps {
  /** The function's name in the platform (permissions table, settings routes, description). */
  name: string;
  /** Folder under functions/ that holds handler.ts; default `name`. */
  folder?: string;
  /** Export of handler.ts that Lambda calls; default `handler`. */
  handlerExport?: string;
  /** The response-streaming twin of an HTTP function (its Function URL streams). */
  streaming?: boolean;
  /** Repository root: holds functions/ and package-lock.json. */
  projectRoot: string;
  timeout: Duration;
  environment: Record<string, string>;
  network?: FunctionNetwork;
  /** Dead-letter queue of asynchronous invocations (EventBridge-triggered functions). */
  deadLetterQueue?: IQueue;
  /** Reserved concurrency (lib/concurrency.ts); none when undefined. */
  reservedConcurrency?: number;
  /** The set its bundle is built with (the platform's functions, all at once); default a set of its own. */
  bundles?: FunctionBundles;
  /**
   * Where the function, its role and its policy are declared (a nested stack of the platform's
   * functions); default beside its log group. The log group always stays in `scope`: it holds data
   * and keeps its logical id, so moving the function never replaces it.
   */
  home?: Construct;
}

/**
 * One Lambda of the platform with the settings every function shares: Node 22 on Graviton,
 * an esbuild ESM bundle split into lazy chunks with the AWS SDK inside (docs/architecture.md §11), and its own log group.
 */
export class PlatformFunction extends Construct {
  readonly fn: LambdaFunction;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    const parts = props.home ? new Construct(props.home, id) : this;
    // Our own role instead of AWSLambdaBasicExecutionRole, whose log rights cover every log group.
    const role = new Role(parts, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grants.write(role);
    if (props.network) allowVpcAttachment(role);
    const entry = functionEntry(props.projectRoot, props.folder ?? props.name);
    this.fn = new LambdaFunction(parts, 'Function', {
      description: props.streaming ? streamingFunctionDescription(props.name) : functionDescription(props.name),
      code: (props.bundles ?? new FunctionBundles([entry])).code(props.projectRoot, entry),
      handler: `${LAMBDA_ENTRY_NAME}.${props.handlerExport ?? 'handler'}`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: LAMBDA_MEMORY_MB,
      timeout: props.timeout,
      logGroup,
      role,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      // Lambda's own X-Ray tracing: no tracer SDK in the bundle, no init cost (bench/tracing.ts).
      tracing: Tracing.ACTIVE,
      ...(props.deadLetterQueue && { deadLetterQueue: props.deadLetterQueue }),
      ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
      ...(props.network && {
        vpc: props.network.vpc,
        vpcSubnets: props.network.subnets,
        securityGroups: [props.network.securityGroup],
      }),
    });
  }
}

/**
 * What Lambda needs to attach a function to the VPC, which AWSLambdaVPCAccessExecutionRole would grant
 * on '*' together with logs on every group. The describes only exist on '*'; the writes are kept to
 * network interfaces, subnets and security groups of this account and region.
 */
function allowVpcAttachment(role: Role) {
  const stack = Stack.of(role);
  const ec2 = (resource: string) => stack.formatArn({ service: 'ec2', resource, resourceName: '*' });
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'], resources: ['*'] }));
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['ec2:CreateNetworkInterface'],
      resources: [ec2('network-interface'), ec2('subnet'), ec2('security-group')],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
      resources: [ec2('network-interface')],
    }),
  );
}

/** The handler file of a function folder (a contract group or a worker). */
export const functionEntry = (projectRoot: string, folder: string) => join(projectRoot, handlerPath(folder));

/** How a function is labelled in the console, and how tests find it in the template. */
export const functionDescription = (name: string) => `agent platform: ${name}`;
export const streamingFunctionDescription = (name: string) => `agent platform: ${name} (response streaming)`;
