import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { inject } from 'vitest';
import { initLoadedOutputs, lambdaBuildOptions, reachableOutputs } from '#build/bundling';
import { handlerPath } from '#contract/functions';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A function built exactly as it deploys (build/bundling.ts `lambdaBuildOptions`), in memory. */
export interface DeployedBundle {
  metafile: Metafile;
  /** The entry's key in the metafile's outputs (`…/index.mjs`). */
  entry: string;
  /** Source files with code in what a cold start parses: the entry and the chunks it imports statically. */
  atInit: string[];
  /** Source files with code in everything the function can load (static and `import()`). */
  reachable: string[];
  /** The code a cold start parses: the entry and the chunks it imports statically, as built. */
  initCode: string;
}

/** The source files with code in the given outputs of a build. */
export function inputsIn(metafile: Metafile, outputs: readonly string[]): string[] {
  return outputs.flatMap((output) =>
    Object.entries(metafile.outputs[output]!.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([name]) => name),
  );
}

/**
 * Builds `functions/<folder>/handler.ts` with the deploy settings, plugins included, one build per
 * function as CDK does, so the cold-start checks judge the chunks that ship. Several test files
 * inspect the same functions, each in its own worker: the first to build one keeps it in the run's
 * folder (test/helpers/global-setup.ts) and the others read it there. The source does not change
 * during a run, so a kept build is the one a rebuild would produce.
 */
export async function buildAsDeployed(folder: string): Promise<DeployedBundle> {
  const kept = path.join(inject('deployedBundleDir'), `${folder.replaceAll('/', '--')}.json`);
  try {
    return JSON.parse(readFileSync(kept, 'utf8')) as DeployedBundle;
  } catch {
    const built = await buildNow(folder);
    // Written aside, then renamed: a worker reading at the same time sees all of it or nothing.
    const partial = `${kept}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify(built));
    renameSync(partial, kept);
    return built;
  }
}

async function buildNow(folder: string): Promise<DeployedBundle> {
  const outdir = path.join(ROOT, `.deployed-bundle-${folder}`);
  const { metafile, outputFiles } = await build({
    ...lambdaBuildOptions(path.join(ROOT, handlerPath(folder)), outdir),
    sourcemap: false,
    // Nothing is written: the checks read the metafile only.
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  const entry = Object.keys(metafile.outputs).find((k) => path.basename(k) === 'index.mjs')!;
  const initOutputs = initLoadedOutputs(metafile, entry);
  const textOf = new Map(outputFiles.map((file) => [path.relative(ROOT, file.path), file.text]));
  return {
    metafile,
    entry,
    atInit: inputsIn(metafile, initOutputs),
    initCode: initOutputs.map((output) => textOf.get(output)!).join('\n'),
    reachable: inputsIn(metafile, reachableOutputs(metafile, entry)),
  };
}

/** Several functions built as they deploy, keyed by folder. */
export async function buildAllAsDeployed(folders: readonly string[]): Promise<Record<string, DeployedBundle>> {
  const built = await Promise.all(folders.map(async (folder) => [folder, await buildAsDeployed(folder)] as const));
  return Object.fromEntries(built);
}
