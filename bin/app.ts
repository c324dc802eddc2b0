import { App } from 'aws-cdk-lib';
import { definePlatform } from '#lib/app';

/**
 * CDK app entry (cdk.json "app"). Operator settings are CDK context: see lib/platform-stack.ts.
 * CDK's built-in CloudFormation validation (a WebAssembly rule engine) is left out of every synthesis:
 * starting its engine costs more than the rest of the app without bundling, and by default it only
 * prints warnings. test/infra/web-console.test.ts runs it on both stacks as a gate instead, errors and
 * warnings failing the test; the cdk-nag packs still run here (lib/nag.ts).
 */
const app = new App({ builtinCloudFormationValidation: false });
definePlatform(app, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION });
