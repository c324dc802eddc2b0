import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/**
 * Lets the bundled SDK and other CommonJS dependencies `require` Node built-ins from the ESM bundle.
 */
const ESM_REQUIRE_SHIM = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

export interface PlatformFunctionProps {
  /** Folder under functions/ that holds handler.ts: a contract group or a worker. */
  name: string;
  /** Repository root: holds functions/ and package-lock.json. */
  projectRoot: string;
  timeout: Duration;
  environment: Record<string, string>;
}

/**
 * One Lambda of the platform with the settings every function shares: Node 22 on Graviton,
 * an esbuild ESM bundle with the AWS SDK inside (DESIGN.md section 11), and its own log group.
 */
export class PlatformFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    // Our own role instead of AWSLambdaBasicExecutionRole, whose log rights cover every log group.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grants.write(role);
    this.fn = new NodejsFunction(this, 'Function', {
      description: functionDescription(props.name),
      entry: join(props.projectRoot, 'functions', props.name, 'handler.ts'),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 1024,
      timeout: props.timeout,
      logGroup,
      role,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        // Stack traces need only the mappings; the sources would double the asset for nothing.
        sourcesContent: false,
        // Bundle the AWS SDK instead of using the runtime's copy: pinned versions, faster cold start.
        externalModules: [],
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_SHIM,
      },
    });
  }
}

/** How a function is labelled in the console, and how tests find it in the template. */
export const functionDescription = (name: string) => `agent platform: ${name}`;
