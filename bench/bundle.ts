import { build, type BuildOptions, type Metafile } from 'esbuild';
import { statSync } from 'node:fs';
import path from 'node:path';
import { LAMBDA_BUNDLE } from '../lib/bundling';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const DIST = path.join(ROOT, 'bench', 'dist');

/**
 * The exact settings CDK deploys with (lib/bundling.ts), so the sizes reported are the sizes that
 * ship; only the metafile (for the per-module breakdown) and quiet logging are added here.
 */
const CDK_LIKE: BuildOptions = { ...LAMBDA_BUNDLE, metafile: true, logLevel: 'silent' };

export interface BundleResult {
  name: string;
  outfile: string;
  bytes: number;
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
  const outfile = path.join(DIST, name, 'index.mjs');
  try {
    const result = await build({ ...CDK_LIKE, entryPoints: [entry], outfile });
    return { name, outfile, bytes: statSync(outfile).size, metafile: result.metafile! };
  } catch (err) {
    const externals = nativePackages(err);
    if (!externals) throw err;
    const result = await build({ ...CDK_LIKE, entryPoints: [entry], outfile, external: externals });
    const cdkBuildError = (err as EsbuildFailure).errors.map((e) => `${e.location?.file ?? ''}: ${e.text}`).join('; ');
    return { name, outfile, bytes: statSync(outfile).size, metafile: result.metafile!, cdkBuildError, externals };
  }
}

/** The bundle's entry in the metafile (the source map is an output too). */
function outputOf(b: BundleResult) {
  const key = Object.keys(b.metafile.outputs).find((k) => k.endsWith('.mjs'));
  if (!key) throw new Error(`no .mjs output in the metafile of ${b.name}`);
  return b.metafile.outputs[key]!;
}

/** Bytes each input contributes to the minified output: what a developer can cut. */
export function topModules(b: BundleResult, n = 5): ModuleShare[] {
  const out = outputOf(b);
  return Object.entries(out.inputs)
    .map(([module, i]) => ({ module, bytes: i.bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}

/** Minified bytes per npm package (scoped packages keep their scope); project files count as one. */
export function packageBytes(b: BundleResult): Map<string, number> {
  const out = outputOf(b);
  const sums = new Map<string, number>();
  for (const [module, i] of Object.entries(out.inputs)) {
    const at = module.lastIndexOf('node_modules/');
    const m = at === -1 ? null : /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module.slice(at));
    const pkg = m ? m[1]! : '(project source)';
    sums.set(pkg, (sums.get(pkg) ?? 0) + i.bytesInOutput);
  }
  return sums;
}

export function topPackages(b: BundleResult, n = 5): ModuleShare[] {
  return [...packageBytes(b)]
    .map(([module, bytes]) => ({ module, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}

/** What a bundle carries on top of the baseline (the document client it needs anyway), per package. */
export function addedOverBaseline(b: BundleResult, baseline: BundleResult, n = 5): ModuleShare[] {
  const base = packageBytes(baseline);
  return [...packageBytes(b)]
    .map(([module, bytes]) => ({ module, bytes: bytes - (base.get(module) ?? 0) }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, n);
}
