import { App } from 'aws-cdk-lib';
import { addNagChecks } from '../lib/nag';
import { PlatformStack } from '../lib/platform-stack';

/** CDK app entry (cdk.json "app"). Operator settings are CDK context: see lib/platform-stack.ts. */
const app = new App();
new PlatformStack(app, 'AgentPlatform', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
addNagChecks(app);
