import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AssetManifestArtifact } from 'aws-cdk-lib/cx-api';
import { afterAll, expect } from 'vitest';
import { functionDescription } from '#lib/constructs/platform-function';
import { PlatformStack } from '#lib/platform-stack';

export type Json = Record<string, any>;

/** The operator defaults from cdk.json, so the tests see the stack an operator would deploy. */
export const cdkContext: Record<string, unknown> = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;

/**
 * Every App writes a cloud assembly folder (a new `cdk.out*` in the temp folder when given none):
 * here they all go under one folder per test file, removed when the file is done.
 */
const assemblies = mkdtempSync(path.join(tmpdir(), 'platform-synth-'));
afterAll(() => rmSync(assemblies, { recursive: true, force: true }));

export const testApp = (context: Record<string, unknown>) => new App({ context, outdir: mkdtempSync(path.join(assemblies, 'cdk.out-')) });

export function synth(context: Record<string, unknown> = {}) {
  return synthStack(context).template;
}

/** The template and the container images of the stack's asset manifest (from the same synthesis). */
export function synthStack(context: Record<string, unknown> = {}) {
  // An empty bundling-stacks list skips esbuild: the tests read the template, not the bundles.
  const app = testApp({ ...cdkContext, ...context, 'aws:cdk:bundling-stacks': [] });
  const stack = new PlatformStack(app, 'AgentPlatform');
  const template = Template.fromStack(stack);
  const artifact = app.synth().getStackByName(stack.stackName);
  const manifests = artifact.dependencies.filter((d): d is AssetManifestArtifact => d instanceof AssetManifestArtifact);
  const dockerImages = Object.values(manifests.flatMap((m) => Object.values(m.contents.dockerImages ?? {})));
  return { template, dockerImages, stack };
}

export const asArray = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: unknown;
  NotAction?: unknown;
  Condition?: Json;
}

/** Look-ups over one synthesized template. */
export function inspect(template: Template) {
  const resources: Record<string, Json> = template.toJSON().Resources;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const logicalIdOf = (type: string, predicate: (props: Json) => boolean) => {
    const found = ofType(type).filter(([, r]) => predicate(r.Properties ?? {}));
    expect(found, `exactly one ${type} matching`).toHaveLength(1);
    return found[0]![0];
  };
  const functionId = (name: string) => logicalIdOf('AWS::Lambda::Function', (p) => p.Description === functionDescription(name));
  const functionProps = (name: string) => resources[functionId(name)]!.Properties as Json;
  const environmentOf = (name: string) => functionProps(name).Environment.Variables as Json;
  const roleIdOf = (fnName: string) => functionProps(fnName).Role['Fn::GetAtt'][0] as string;

  /** Every statement granted to a role: its inline policies and the AWS::IAM::Policy resources attached to it. */
  function statementsOfRole(roleId: string): Statement[] {
    const role = resources[roleId]!;
    expect(role.Type).toBe('AWS::IAM::Role');
    const inline = asArray<Json>(role.Properties.Policies).flatMap((p) => p.PolicyDocument.Statement);
    const attached = ofType('AWS::IAM::Policy')
      .filter(([, p]) => asArray<Json>(p.Properties.Roles).some((r) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
    return [...inline, ...attached];
  }
  const statementsOf = (fnName: string) => statementsOfRole(roleIdOf(fnName));
  const actionsOfRole = (roleId: string) => statementsOfRole(roleId).flatMap((s) => asArray(s.Action));
  const actionsOf = (fnName: string) => actionsOfRole(roleIdOf(fnName));
  const statementsWith = (fnName: string, action: string) => statementsOf(fnName).filter((s) => asArray(s.Action).includes(action));

  /** Every identity-policy statement in the template, wherever it is declared. */
  function allIdentityStatements(): Statement[] {
    return [
      ...ofType('AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
      ...ofType('AWS::IAM::ManagedPolicy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
      ...ofType('AWS::IAM::Role').flatMap(([, r]) => asArray<Json>(r.Properties.Policies).flatMap((p) => p.PolicyDocument.Statement)),
    ];
  }

  return {
    resources,
    ofType,
    logicalIdOf,
    functionId,
    functionProps,
    environmentOf,
    roleIdOf,
    statementsOfRole,
    statementsOf,
    statementsWith,
    actionsOfRole,
    actionsOf,
    allIdentityStatements,
  };
}
