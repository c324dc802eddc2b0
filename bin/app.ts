import { App } from 'aws-cdk-lib';
import { definePlatform } from '#lib/app';

/** CDK app entry (cdk.json "app"). Operator settings are CDK context: see lib/platform-stack.ts. */
const app = new App();
definePlatform(app, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION });
