import type { App, Environment } from 'aws-cdk-lib';
import { WebConsoleStack } from './constructs/web-console';
import { addNagChecks } from './nag';
import { PlatformStack } from './platform-stack';
import { readStage, stagedName } from './stage';

/**
 * The whole deployment of one stage: the platform stack, the console stack beside it and the cdk-nag
 * packs. Without a stage the stacks keep the names they always had; with one (`-c stage=<name>`)
 * both names start with it, and so does every name CloudFormation generates from them.
 */
export function definePlatform(app: App, env?: Environment) {
  const stage = readStage(app.node);
  const platform = new PlatformStack(app, stagedName(stage, 'AgentPlatform'), { env });
  const webConsole = new WebConsoleStack(app, stagedName(stage, 'AgentPlatformConsole'), {
    env,
    httpApi: platform.api.httpApi,
    agentDomain: platform.agentDomain,
  });
  addNagChecks(app);
  return { stage, platform, webConsole };
}
