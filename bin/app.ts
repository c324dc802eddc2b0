import { App } from 'aws-cdk-lib';
import { addNagChecks } from '#lib/nag';
import { WebConsoleStack } from '#lib/constructs/web-console';
import { PlatformStack } from '#lib/platform-stack';

/** CDK app entry (cdk.json "app"). Operator settings are CDK context: see lib/platform-stack.ts. */
const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const platform = new PlatformStack(app, 'AgentPlatform', { env });
new WebConsoleStack(app, 'AgentPlatformConsole', { env, httpApi: platform.api.httpApi });
addNagChecks(app);
