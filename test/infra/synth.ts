import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
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
 * here they all go under one folder per test file, removed when the file is done. Without CDK's
 * built-in CloudFormation validation, as bin/app.ts: test/infra/web-console.test.ts runs it once.
 */
const assemblies = mkdtempSync(path.join(tmpdir(), 'platform-synth-'));
afterAll(() => rmSync(assemblies, { recursive: true, force: true }));

export const testApp = (context: Record<string, unknown>) =>
  new App({ context, outdir: mkdtempSync(path.join(assemblies, 'cdk.out-')), builtinCloudFormationValidation: false });

export function synth(context: Record<string, unknown> = {}) {
  return synthStack(context).template;
}

/**
 * The template and the container images of the stack's asset manifest (from the same synthesis).
 * `template` is the whole deployment as one template: the main stack's resources and those of its
 * nested stacks, with every nested-stack parameter and output replaced by what it stands for, so a
 * test reads a function's role next to the table it is granted. `mainTemplate` is the main stack
 * alone (its resource count is CloudFormation's 500-resource limit).
 */
export function synthStack(context: Record<string, unknown> = {}) {
  // An empty bundling-stacks list skips esbuild: the tests read the template, not the bundles.
  const app = testApp({ ...cdkContext, ...context, 'aws:cdk:bundling-stacks': [] });
  const stack = new PlatformStack(app, 'AgentPlatform');
  const mainTemplate = Template.fromStack(stack);
  const template = Template.fromJSON(flattenNestedStacks(stack, mainTemplate.toJSON()));
  const artifact = app.synth().getStackByName(stack.stackName);
  const manifests = artifact.dependencies.filter((d): d is AssetManifestArtifact => d instanceof AssetManifestArtifact);
  const dockerImages = Object.values(manifests.flatMap((m) => Object.values(m.contents.dockerImages ?? {})));
  return { template, mainTemplate, dockerImages, stack };
}

/** The nested stacks of `stack`, each with its template and the logical id of its resource in `stack`. */
export function nestedStacksOf(stack: Stack) {
  return stack.node
    .findAll()
    .filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack)
    .map((nested) => ({ nested, resourceId: stack.resolve(nested.nestedStackResource!.logicalId) as string, template: Template.fromStack(nested).toJSON() }));
}

/** One template of the main stack and its nested stacks (one level), references across them resolved. */
export function flattenNestedStacks(stack: Stack, main: Json): Json {
  const nested = new Map(nestedStacksOf(stack).map((n) => [n.resourceId, n.template]));
  const resolvedOutputs = new Map<string, Json>();
  // `{ Fn::GetAtt: [<nested stack>, 'Outputs.X'] }` in any template: the output's value, itself resolved.
  const outputOf = (resourceId: string, output: string): unknown => {
    const key = `${resourceId}.${output}`;
    if (!resolvedOutputs.has(key)) {
      const child = nested.get(resourceId);
      if (!child?.Outputs?.[output]) throw new Error(`no output ${output} in nested stack ${resourceId}`);
      resolvedOutputs.set(key, { value: resolveIn(resourceId, child.Outputs[output].Value) });
    }
    return resolvedOutputs.get(key)!.value;
  };
  const parameterOf = (resourceId: string, name: string): unknown => {
    const value = main.Resources[resourceId].Properties.Parameters?.[name];
    if (value === undefined) throw new Error(`nested stack ${resourceId} is given no parameter ${name}`);
    return resolveIn(undefined, value);
  };
  function resolveIn(nestedId: string | undefined, value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => resolveIn(nestedId, v));
    if (value === null || typeof value !== 'object') return value;
    const object = value as Json;
    const keys = Object.keys(object);
    if (keys.length === 1 && keys[0] === 'Ref' && nestedId && nested.get(nestedId)!.Parameters?.[object.Ref]) return parameterOf(nestedId, object.Ref);
    if (keys.length === 1 && keys[0] === 'Fn::GetAtt') {
      const [target, attribute] = object['Fn::GetAtt'] as [string, string];
      if (!nestedId && nested.has(target) && attribute.startsWith('Outputs.')) return outputOf(target, attribute.slice('Outputs.'.length));
    }
    return Object.fromEntries(keys.map((k) => [k, resolveIn(nestedId, object[k])]));
  }
  const resources: Json = {};
  const add = (id: string, resource: unknown) => {
    if (id in resources) throw new Error(`logical id ${id} is declared in two stacks: the flattened view would lose one`);
    resources[id] = resource;
  };
  for (const [id, resource] of Object.entries(main.Resources as Json)) add(id, resolveIn(undefined, resource));
  for (const [id, child] of nested) for (const [childId, resource] of Object.entries(child.Resources as Json)) add(childId, resolveIn(id, resource));
  return { ...main, Resources: resources, Outputs: resolveIn(undefined, main.Outputs ?? {}) };
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
