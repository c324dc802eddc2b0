import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { definePlatform } from '#lib/app';
import { readStage } from '#lib/stage';
import statefulLogicalIds from './fixtures/stateful-logical-ids.json' with { type: 'json' };
import { cdkContext, flattenNestedStacks, testApp, type Json } from './synth';

/**
 * Two stages in one account and region: `-c stage=<name>` as bin/app.ts declares it (both stacks,
 * the cdk-nag packs as validation plugins), with no name a resource holds shared between them, and
 * no stage at all leaving the deployment exactly as it was.
 */
const deployment = (stage?: string) => {
  const app = testApp({ ...cdkContext, ...(stage && { stage }), 'aws:cdk:bundling-stacks': [] });
  const { platform, webConsole } = definePlatform(app);
  const templates = [flattenNestedStacks(platform, Template.fromStack(platform).toJSON()), Template.fromStack(webConsole).toJSON()];
  return { stacks: [platform, webConsole] as Stack[], templates };
};

/**
 * Properties that name something in the account, the region or DNS. Left out: names inside their
 * owner (an API's stage, a table's index, a role's inline policy, a task's container) and labels.
 */
const SCOPED_NAMES = new Set(['StageName', 'IndexName', 'AttributeName', 'MetricName', 'DisplayName', 'ContainerName', 'PolicyName']);
const NAMING_KEY = /(^|[a-z])Name$|^Family$/;
/** Names of AWS's own things that a resource points at, not names it takes. */
const NAMES_OF_OTHERS = new Set(['AWS::EC2::VPCEndpoint.ServiceName']);

/** Every literal (or joined) name a template gives a resource, and its export names; generated names are CloudFormation's, from the stack name. */
function physicalNames(template: Json): string[] {
  const names: string[] = [];
  const take = (where: string, value: unknown) => {
    if (typeof value === 'string') names.push(value);
    else if (value && typeof value === 'object' && ('Fn::Join' in value || 'Fn::Sub' in value)) names.push(JSON.stringify(value));
    else if (value !== undefined && typeof value !== 'object') throw new Error(`unexpected name at ${where}`);
  };
  for (const [id, resource] of Object.entries(template.Resources as Json)) {
    if (resource.Type === 'AWS::IAM::Policy') continue;
    const properties: Json = resource.Properties ?? {};
    for (const [key, value] of Object.entries(properties)) {
      if (NAMING_KEY.test(key) && !SCOPED_NAMES.has(key) && !NAMES_OF_OTHERS.has(`${resource.Type}.${key}`)) take(`${id}.${key}`, value);
      // CloudFront's policies and access controls name themselves inside their config object.
      const config = /Config$/.test(key) && value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
      if (config && 'Name' in config) take(`${id}.${key}.Name`, config.Name);
    }
  }
  for (const output of Object.values((template.Outputs ?? {}) as Json)) if (output.Export) take('export', output.Export.Name);
  return names;
}

const blue = deployment('blue');
const green = deployment('green');
const plain = deployment();
const namesOf = (d: typeof blue) => d.templates.flatMap(physicalNames);

describe('stages', () => {
  it('prefix both stack names with the stage, and keep them as they were without one', () => {
    expect(blue.stacks.map((s) => s.stackName)).toEqual(['blue-AgentPlatform', 'blue-AgentPlatformConsole']);
    expect(plain.stacks.map((s) => s.stackName)).toEqual(['AgentPlatform', 'AgentPlatformConsole']);
  });

  it('share no physical name between two stages', () => {
    const blueNames = namesOf(blue);
    const greenNames = namesOf(green);
    // The task families, the API's name, the edge's certificate, CloudFront's function, headers policy and access control...
    expect(blueNames.length).toBeGreaterThan(5);
    expect(blueNames.filter((n) => greenNames.includes(n))).toEqual([]);
    expect(blueNames).toContain('blue-HttpApi');
    // Names CDK derives from the construct path start with the stack's id, hence the stage.
    expect(blueNames.filter((n) => /^blueAgentPlatform/.test(n)).length).toBeGreaterThanOrEqual(2);
  });

  it("put a stage's agents under <stage>.<agentDomain>, in the console's content security policy too", () => {
    const domain = String(cdkContext.agentDomain);
    const record = Object.values(blue.templates[0]!.Resources as Json).find((r) => r.Type === 'AWS::CertificateManager::Certificate');
    expect(record.Properties.DomainName).toBe(`*.blue.${domain}`);
    expect(JSON.stringify(blue.templates[1])).toContain(`blue.${domain}`);
    const plainCertificate = Object.values(plain.templates[0]!.Resources as Json).find((r) => r.Type === 'AWS::CertificateManager::Certificate');
    expect(plainCertificate.Properties.DomainName).toBe(`*.${domain}`);
  });

  it('keep the logical ids of everything that holds data, so a stage is the same deployment under other names', () => {
    for (const [type, ids] of Object.entries(statefulLogicalIds)) {
      const inBlue = Object.entries(blue.templates[0]!.Resources as Json)
        .filter(([, r]) => r.Type === type)
        .map(([id]) => id);
      expect(inBlue, type).toEqual(expect.arrayContaining(ids as string[]));
    }
  });

  it('without a stage, name nothing that was unnamed before', () => {
    const names = namesOf(plain);
    expect(names.filter((n) => /blue|green/.test(n))).toEqual([]);
    expect(names).toContain('HttpApi');
  });

  it('refuse a stage name that cannot start a stack or bucket name', () => {
    const read = (stage: string) => () => readStage(new App({ context: { stage } }).node);
    for (const bad of ['Prod', '1st', 'a_b', 'way-too-long-name', 'end-']) expect(read(bad), bad).toThrow(/CDK context "stage"/);
    expect(read('staging')()).toBe('staging');
  });
});
