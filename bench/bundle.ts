import { build, type BuildOptions, type Metafile } from 'esbuild';
import path from 'node:path';
import { initLoadedOutputs, lambdaBuildOptions, reachableOutputs } from '#build/bundling';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const DIST = path.join(ROOT, 'bench', 'dist');

/**
 * The exact settings CDK deploys with (build/bundling.ts: an entry and chunks), so the sizes reported
 * are the sizes that ship; only the metafile (for the per-module breakdown) and quiet logging are added here.
 */
const cdkLike = (entry: string, outdir: string): BuildOptions => ({ ...lambdaBuildOptions(entry, outdir), metafile: true, logLevel: 'silent' });

export interface BundleResult {
  name: string;
  /** The entry, index.mjs: what Lambda imports. */
  outfile: string;
  /** Entry plus the chunks it imports statically: what a cold start parses and runs. */
  initBytes: number;
  /** Every .mjs the function deploys (entry and all chunks): what counts against the package limit. */
  packageBytes: number;
  /** Chunks only an `import()` loads, first when a request needs them (absolute paths). */
  lazyChunks: string[];
  /** Metafile keys of the outputs loaded at init. */
  initOutputs: string[];
  metafile: Metafile;
  /**
   * Set when the CDK settings cannot bundle the function: esbuild's error, and the packages left
   * external (as CDK's `nodeModules` would) so the rest of the report still has numbers.
   */
  cdkBuildError?: string;
  externals?: string[];
}

export interface ModuleShare {
  module: string;
  bytes: number;
}

interface EsbuildFailure {
  errors: { text: string; location: { file: string } | null }[];
}

/** Native addons (`.node`) cannot be bundled; the package that loads one must ship beside the bundle. */
function nativePackages(err: unknown): string[] | undefined {
  const errors = (err as Partial<EsbuildFailure>).errors;
  if (!errors?.length || !errors.every((e) => e.text.includes('No loader is configured for ".node" files'))) return undefined;
  const pkgs = errors.map((e) => /node_modules\/((?:@[^/]+\/)?[^/]+)\/[^]*$/.exec(e.location?.file ?? '')?.[1]);
  return pkgs.every(Boolean) ? [...new Set(pkgs as string[])] : undefined;
}

export async function bundle(name: string, entry: string): Promise<BundleResult> {
  const outdir = path.join(DIST, name);
  try {
    return measure(name, outdir, (await build({ ...cdkLike(entry, outdir), absWorkingDir: ROOT })).metafile!);
  } catch (err) {
    const externals = nativePackages(err);
    if (!externals) throw err;
    const result = await build({ ...cdkLike(entry, outdir), absWorkingDir: ROOT, external: externals });
    const cdkBuildError = (err as EsbuildFailure).errors.map((e) => `${e.location?.file ?? ''}: ${e.text}`).join('; ');
    return { ...measure(name, outdir, result.metafile!), cdkBuildError, externals };
  }
}

function measure(name: string, outdir: string, metafile: Metafile): BundleResult {
  const code = Object.keys(metafile.outputs).filter((o) => o.endsWith('.mjs'));
  // Not the first output with an entryPoint: every import() target is an entry point of its chunk too.
  const entry = path.relative(ROOT, path.join(outdir, 'index.mjs'));
  if (!metafile.outputs[entry]) throw new Error(`no index.mjs in the metafile of ${name}`);
  const initOutputs = initLoadedOutputs(metafile, entry);
  const bytesOf = (outputs: string[]) => outputs.reduce((sum, o) => sum + metafile.outputs[o]!.bytes, 0);
  return {
    name,
    outfile: path.resolve(ROOT, entry),
    initBytes: bytesOf(initOutputs),
    packageBytes: bytesOf(code),
    // The chunk of an import() that tree shaking removed is not written (build/plugins/drop-unreachable-chunks.ts).
    lazyChunks: reachableOutputs(metafile, entry)
      .filter((o) => !initOutputs.includes(o))
      .map((o) => path.resolve(ROOT, o)),
    initOutputs,
    metafile,
  };
}

/** What each input leaves in the outputs a cold start loads. */
function initInputs(b: BundleResult): [string, number][] {
  return b.initOutputs.flatMap((o) => Object.entries(b.metafile.outputs[o]!.inputs).map(([module, i]): [string, number] => [module, i.bytesInOutput]));
}

/** Bytes each input contributes to the minified code loaded at init: what a developer can cut. */
export function topModules(b: BundleResult, n = 5): ModuleShare[] {
  return initInputs(b)
    .map(([module, bytes]) => ({ module, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}

/** Minified bytes loaded at init per npm package (scoped packages keep their scope); project files count as one. */
export function bytesByPackage(b: BundleResult): Map<string, number> {
  const sums = new Map<string, number>();
  for (const [module, bytes] of initInputs(b)) {
    const at = module.lastIndexOf('node_modules/');
    const m = at === -1 ? null : /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module.slice(at));
    const pkg = m ? m[1]! : '(project source)';
    sums.set(pkg, (sums.get(pkg) ?? 0) + bytes);
  }
  return sums;
}

export function topPackages(b: BundleResult, n = 5): ModuleShare[] {
  return [...bytesByPackage(b)]
    .map(([module, bytes]) => ({ module, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}

/** What a bundle carries on top of the baseline (the document client it needs anyway), per package. */
export function addedOverBaseline(b: BundleResult, baseline: BundleResult, n = 5): ModuleShare[] {
  const base = bytesByPackage(baseline);
  return [...bytesByPackage(b)]
    .map(([module, bytes]) => ({ module, bytes: bytes - (base.get(module) ?? 0) }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}
