import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { build, type BuildOptions, type BuildResult } from 'esbuild';
import { cachedBuild, projectKeyOf } from './bundle-cache';
import { lambdaBuildOptions } from './bundling';

/**
 * Every function of a synthesis bundled in one process. Each function is still its own esbuild build
 * (`lambdaBuildOptions`: its own entry, chunks and plugins), because a build of several entries would
 * share chunks between functions and let a module shared by two keep what either one uses. What one
 * process saves is everything around the builds: one Node and tsx start instead of one per function,
 * TypeScript loaded once, and the plugins' rewrites of the same files (contract, settings, AI SDK
 * modules) done once for all functions instead of once per function.
 */
export interface FunctionBuild {
  /** The handler file. */
  entry: string;
  /** Where its index.mjs, chunks/ and source maps are written. */
  outdir: string;
}

/**
 * Builds every function, a few at a time: esbuild spreads one build over the cores already, so more at
 * once only adds memory, while two overlap one build's JavaScript plugin work with another's bundling.
 * `overrides` are added to each build's options (the tests ask for metafiles and leave the maps out);
 * the results are in the order of `builds`.
 */
export async function bundleFunctions<Options extends BuildOptions>(
  builds: readonly FunctionBuild[],
  overrides?: Options,
  concurrency = defaultConcurrency(),
): Promise<BuildResult<Options>[]> {
  const results: BuildResult<Options>[] = [];
  let next = 0;
  const worker = async () => {
    while (next < builds.length) {
      const i = next++;
      const { entry, outdir } = builds[i]!;
      results[i] = (await build({ ...lambdaBuildOptions(entry, outdir), logLevel: 'error', ...overrides })) as BuildResult<Options>;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, builds.length) }, worker));
  return results;
}

const defaultConcurrency = () => Math.max(2, availableParallelism());

/**
 * Every function built as CDK deploys it, each reusing its bundle of an earlier synthesis from
 * `cacheDir` when nothing it was built from changed (build/bundle-cache.ts).
 */
export async function bundleFunctionsCached(builds: readonly FunctionBuild[], cacheDir: string, concurrency = defaultConcurrency()): Promise<void> {
  const cache = { dir: cacheDir, projectKey: projectKeyOf(process.cwd()) };
  let next = 0;
  const worker = async () => {
    while (next < builds.length) {
      const { entry, outdir } = builds[next++]!;
      await cachedBuild({ ...lambdaBuildOptions(entry, outdir), logLevel: 'error' }, cache);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, builds.length) }, worker));
}

/**
 * `bundleFunctionsCached` from synchronous code (CDK's local bundling: tryBundle cannot wait). esbuild runs
 * plugins only in its asynchronous API, so one child node process (with tsx, to load this file)
 * builds them all; an esbuild error stops it, and with it the synthesis.
 */
export function bundleFunctionsSync(builds: readonly FunctionBuild[], cacheDir: string): void {
  const script = `const { bundleFunctionsCached } = await import(${JSON.stringify(import.meta.url)});
await bundleFunctionsCached(${JSON.stringify(builds)}, ${JSON.stringify(cacheDir)});`;
  execFileSync(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
}
// tsx's one export is its loader (`node --import tsx`); an absolute URL, whatever the working directory.
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
