import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAsDeployed } from '../helpers/deployed-bundle';

/**
 * The AWS clients other than DynamoDB load on their first use, never at a function's cold start:
 * each is reached only through `await import()` of its wrapper in platform/lazy, so a
 * build with code splitting puts it in a lazy chunk that the entry file does not import.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LAZY_PACKAGES = ['client-kms', 'client-sqs', 'client-sesv2', 'client-s3', 's3-request-presigner', 'client-ecs', 'client-cloudwatch-logs'];
const packageOf = (input: string) => LAZY_PACKAGES.find((p) => input.includes(`node_modules/@aws-sdk/${p}/`));

/** Functions that between them use every one of these clients. */
const FUNCTIONS = {
  keys: ['client-kms'],
  settings: ['client-sesv2', 'client-sqs'],
  provisioner: ['client-s3', 'client-ecs', 'client-kms'],
  'agent-logs': ['client-cloudwatch-logs'],
};

interface SplitBundle {
  /** The AWS client packages in the entry file and the chunks it imports statically. */
  atInit: Set<string>;
  /** Those only in chunks an `import()` loads. */
  lazy: Set<string>;
}

async function splitBuild(fn: string): Promise<SplitBundle> {
  const built = await buildAsDeployed(fn);
  const packagesIn = (inputs: string[]) => new Set(inputs.map(packageOf).filter((p): p is string => p !== undefined));
  const atInit = packagesIn(built.atInit);
  return { atInit, lazy: new Set([...packagesIn(built.reachable)].filter((p) => !atInit.has(p))) };
}

const bundles: Record<string, SplitBundle> = {};
beforeAll(async () => {
  for (const fn of Object.keys(FUNCTIONS)) bundles[fn] = await splitBuild(fn);
}, 120_000);

describe('AWS clients other than DynamoDB load on first use', () => {
  it.each(Object.entries(FUNCTIONS))('%s holds its clients in lazy chunks only', (fn, used) => {
    expect([...bundles[fn]!.atInit]).toEqual([]);
    expect([...bundles[fn]!.lazy]).toEqual(expect.arrayContaining(used));
  });

  it('only the wrappers in platform/lazy import these packages as values', () => {
    const sources = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir)).flatMap((name) => {
        const rel = path.join(dir, name);
        if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel);
        return rel.endsWith('.ts') ? [rel] : [];
      });
    const valueImport = new RegExp(`^(?:import|export) (?!type )[^;]*from '@aws-sdk/(?:${LAZY_PACKAGES.join('|')})'`, 'm');
    const importers = ['contract', 'platform', 'adapters', 'data', 'domain', 'http', 'functions']
      .flatMap(sources)
      .filter((file) => valueImport.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(importers.sort()).toEqual(
      ['cloudwatch-logs', 'ecs', 'kms', 's3', 'sqs']
        .map((w) => path.join('platform', 'lazy', `aws-${w}.ts`))
        .concat('adapters/email-ses.ts')
        .sort(),
    );
  });
});
