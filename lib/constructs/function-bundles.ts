import { readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { bundleFunctionsSync } from '#build/bundle-functions';

/**
 * The bundles of a set of functions, built together the first time CDK asks for one of them. CDK's
 * local bundling asks for one asset at a time, synchronously, as each function is declared; building each
 * in a child process of its own started Node, tsx and TypeScript again for every function and rewrote the
 * same files again in every build. Here the first asset CDK asks for builds every function of the set in
 * one child process (build/bundle-functions.ts), and each asset then takes its own, already built, folder.
 * A function nothing of which changed since the last synthesis into the same assembly folder takes
 * its bundle from there (build/bundle-cache.ts, in FUNCTION_BUNDLE_CACHE beside the assets).
 * Nothing is built when CDK skips bundling (the `aws:cdk:bundling-stacks` context), as before.
 */
export class FunctionBundles {
  /** Entry → the folder holding its built bundle, until an asset takes it. */
  private readonly built = new Map<string, string>();
  private buildStarted = false;

  /** `entries`: the handler files of every function the set will be asked for (duplicates are built once). */
  constructor(private readonly entries: readonly string[]) {}

  /**
   * CDK's asset for the function whose handler is `entry`, hashed on the bundle (AssetHashType.OUTPUT), so
   * a change to the code that ships redeploys the function and nothing else does. Not NodejsFunction: its
   * esbuild call writes one `--outfile`, which cannot split code into lazy chunks.
   */
  code(projectRoot: string, entry: string): Code {
    return Code.fromAsset(projectRoot, {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        local: { tryBundle: (outputDir) => this.moveInto(entry, outputDir) },
        // Never reached: tryBundle bundles or throws. Docker has no copy of the absolute alias paths
        // of build/bundling.ts, so a container build could not be the same bundle; fail, saying why.
        image: DockerImage.fromRegistry('public.ecr.aws/docker/library/busybox:stable'),
        command: ['sh', '-c', `echo '${LOCAL_BUNDLING_ONLY}' >&2; exit 1`],
        // CDK caches a staged asset by its source folder and its bundling settings (tryBundle is a function,
        // left out of that key), and the folder is the project root for every function: without the entry
        // in the settings, every function would receive the first one's bundle.
        environment: { FUNCTION_ENTRY: relative(projectRoot, entry) },
      },
    });
  }

  /** Moves the bundle of `entry` (index.mjs, chunks/, source maps) into CDK's `outputDir`, building the set first if it is not built. */
  private moveInto(entry: string, outputDir: string): true {
    if (!this.built.has(entry)) this.build(this.buildStarted ? [entry] : [...new Set([...this.entries, entry])], outputDir);
    const folder = this.built.get(entry)!;
    this.built.delete(entry);
    for (const name of readdirSync(folder)) renameSync(join(folder, name), join(outputDir, name));
    rmSync(folder, { recursive: true, force: true });
    return true;
  }

  /**
   * Builds `entries` into folders beside `outputDir`: the same depth under the assembly folder as the
   * folder CDK bundles into, so the source maps' relative paths to the sources are the same as if each had
   * been built there; and the same file system, so the move into it is a rename.
   */
  private build(entries: readonly string[], outputDir: string): void {
    this.buildStarted = true;
    const builds = entries.map((entry, i) => ({ entry, outdir: join(dirname(outputDir), `${basename(outputDir)}-function-${i}`) }));
    // A folder no asset took (the synthesis stopped first) is not left in the assembly.
    process.once('exit', () => {
      for (const { outdir } of builds) rmSync(outdir, { recursive: true, force: true });
    });
    bundleFunctionsSync(builds, join(dirname(outputDir), FUNCTION_BUNDLE_CACHE));
    for (const { entry, outdir } of builds) this.built.set(entry, outdir);
  }
}

/** The cache's folder in the cloud assembly folder (cdk.out): not an asset, so never uploaded; removed with the folder. */
export const FUNCTION_BUNDLE_CACHE = '.function-bundle-cache';

const LOCAL_BUNDLING_ONLY = 'functions are bundled locally with esbuild (build/bundling.ts, a devDependency), never in Docker; run npm ci first';
