import type { Node } from 'constructs';

/**
 * Short, lower case, DNS-safe: it starts the stack names (hence every name CloudFormation generates
 * from them, buckets included, which must be lower case) and the stage's agent domain.
 */
const STAGE_NAME = /^[a-z](?:[a-z0-9-]{0,10}[a-z0-9])?$/;

/**
 * CDK context `stage`: empty (the default) is the deployment as it always was; a name deploys a
 * second copy beside it in the same account and region, every stack and physical name prefixed.
 */
export function readStage(node: Node): string {
  const value: unknown = node.tryGetContext('stage');
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string' || !STAGE_NAME.test(value.trim()))
    throw new Error(`CDK context "stage" must be 1-12 lower-case letters, digits or inner hyphens, starting with a letter: ${String(value)}`);
  return value.trim();
}

/** `AgentPlatform` as it is without a stage; `<stage>-AgentPlatform` with one. */
export const stagedName = (stage: string, name: string) => (stage ? `${stage}-${name}` : name);

/** A stage's agents live one level down, `<subdomain>.<stage>.<agentDomain>`, so both stages can share the hosted zone. */
export const stagedDomain = (stage: string, domain: string) => (stage ? `${stage}.${domain}` : domain);
