import { join, relative } from 'node:path';
import { AssetHashType, DockerImage, type Duration, Stack } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { bundleFunctionSync, LAMBDA_ENTRY_NAME } from '#build/bundling';
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
}

/**
 * CDK's asset for a function: esbuild with build/bundling.ts's options and plugins, in a child process (bundleFunctionSync). Not
 * NodejsFunction: its esbuild call writes one `--outfile`, which cannot split code into lazy chunks.
 * The asset is hashed on the bundler's output, so any change to the code that ships redeploys the
 * function and nothing else does.
 */
export function functionCode(projectRoot: string, entry: string): Code {
  const source = relative(projectRoot, entry);
  return Code.fromAsset(projectRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      local: { tryBundle: (outputDir) => bundleFunction(entry, outputDir) },
      // Never reached: tryBundle bundles or throws. Docker has no copy of the absolute alias paths
      // of build/bundling.ts, so a container build could not be the same bundle; fail, saying why.
      image: DockerImage.fromRegistry('public.ecr.aws/docker/library/busybox:stable'),
      command: ['sh', '-c', `echo '${LOCAL_BUNDLING_ONLY}' >&2; exit 1`],
      // CDK caches a staged asset by its source folder and its bundling settings (tryBundle is a function,
      // left out of that key), and the folder is the project root for every function: without the entry
      // in the settings, every function would receive the first one's bundle.
      environment: { FUNCTION_ENTRY: source },
    },
  });
}

const LOCAL_BUNDLING_ONLY = 'functions are bundled locally with esbuild (build/bundling.ts, a devDependency), never in Docker; run npm ci first';

/** Writes index.mjs, chunks/ and their source maps into `outputDir`; an esbuild error stops the synthesis. */
export function bundleFunction(entry: string, outputDir: string): true {
  bundleFunctionSync(entry, outputDir);
  return true;
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
    // Our own role instead of AWSLambdaBasicExecutionRole, whose log rights cover every log group.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grants.write(role);
    if (props.network) allowVpcAttachment(role);
    this.fn = new LambdaFunction(this, 'Function', {
      description: props.streaming ? streamingFunctionDescription(props.name) : functionDescription(props.name),
      code: functionCode(props.projectRoot, join(props.projectRoot, handlerPath(props.folder ?? props.name))),
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

/** How a function is labelled in the console, and how tests find it in the template. */
export const functionDescription = (name: string) => `agent platform: ${name}`;
export const streamingFunctionDescription = (name: string) => `agent platform: ${name} (response streaming)`;
