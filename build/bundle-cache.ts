import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type BuildOptions, version as esbuildVersion } from 'esbuild';
import { sourcesOf } from './layers';

/**
 * bundle-cache: a synthesis rebuilds only the functions whose code changed.
 *
 * Why: esbuild's own work on every function (each build parses, links, minifies and maps its own copy
 * of the SDK and zod) is most of a synthesis, and a synthesis after a change to one function, or to
 * nothing, rebuilt all of them. Each build's outputs are kept with the files it read (the metafile's
 * inputs, plugin namespaces included) and a hash of each; the next build of the same entry with the
 * same settings copies them back instead when every one of those files still has its hash.
 *
 * What is in the key, so a reused bundle is the bundle esbuild would write: esbuild's version; the
 * options (plugins by name; the output folder by its place relative to the working folder, which the
 * source maps' paths depend on); everything under build/ (the plugins and substitutes themselves);
 * package.json (the `imports` aliases), package-lock.json (every dependency's version) and
 * tsconfig.json; the list of the project's source files, so a new file that an import could now
 * resolve to rebuilds too. The inputs are compared by content, not by modification time.
 *
 * What would break it: a plugin that reads a file which is neither a metafile input nor under build/
 * (test/unit/build-bundle-cache.test.ts rebuilds on a changed input and on a changed plugin setting).
 */
export type CachedBuild = 'built' | 'reused';

interface Manifest {
  key: string;
  /** Every file the build read, relative to the working folder, with its hash. */
  inputs: [string, string][];
}

/**
 * Hash of a file's contents, read once per process while its size and modification time stay the
 * same (a synthesis checks the same SDK files for every function); undefined for a missing file.
 */
const hashes = new Map<string, { stamp: string; hash: string }>();
function hashOf(file: string): string | undefined {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) return undefined;
  const stamp = `${stat.size}:${stat.mtimeMs}`;
  const known = hashes.get(file);
  if (known?.stamp === stamp) return known.hash;
  const hash = createHash('sha256').update(readFileSync(file)).digest('hex');
  hashes.set(file, { stamp, hash });
  return hash;
}

/**
 * What every function's build under the working folder `root` depends on besides its own inputs (the
 * list above): computed once for all the functions of a synthesis.
 */
export function projectKeyOf(root: string): string {
  const hash = createHash('sha256').update(esbuildVersion);
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json']) hash.update(`${file}\0${hashOf(path.join(root, file)) ?? ''}\0`);
  const buildDir = path.join(root, 'build');
  for (const file of existsSync(buildDir) ? sourcesOf(buildDir) : []) hash.update(`${file}\0${hashOf(path.join(buildDir, file))}\0`);
  hash.update(sourcesOf(root).join('\0'));
  return hash.digest('hex');
}

function optionsKey(options: BuildOptions, root: string): string {
  const { plugins, outdir, ...rest } = options;
  return JSON.stringify({ ...rest, plugins: plugins?.map((p) => p.name), outdir: outdir && path.relative(path.resolve(root, outdir), root) });
}

/** A metafile input (`file`, or `namespace:file?query` of a plugin's module) as the file it was read from, if it names one. */
function inputFile(input: string, root: string): string | undefined {
  const file = input.replace(/^[a-z][a-z0-9-]*:(?=\/)/, '').replace(/\?.*$/, '');
  const absolute = path.resolve(root, file);
  return existsSync(absolute) ? path.relative(root, absolute) : undefined;
}

/**
 * esbuild's `build(options)` into `options.outdir`, or the outputs of an earlier build with the same
 * key and inputs copied there from `cacheDir`. Answers which one happened. `projectKey`: `projectKeyOf`
 * the working folder.
 */
export async function cachedBuild(options: BuildOptions & { outdir: string }, cache: { dir: string; projectKey: string }): Promise<CachedBuild> {
  const root = path.resolve(options.absWorkingDir ?? process.cwd());
  const key = createHash('sha256').update(cache.projectKey).update(optionsKey(options, root)).digest('hex');
  const entryDir = path.join(cache.dir, createHash('sha256').update(JSON.stringify(options.entryPoints)).digest('hex').slice(0, 32));
  const manifestFile = path.join(entryDir, 'manifest.json');
  const outdir = path.resolve(root, options.outdir);
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    if (manifest.key === key && manifest.inputs.every(([file, hash]) => hashOf(path.join(root, file)) === hash)) {
      rmSync(outdir, { recursive: true, force: true });
      cpSync(path.join(entryDir, 'out'), outdir, { recursive: true });
      return 'reused';
    }
  }
  const result = await build({ ...options, metafile: true });
  const files = [...new Set(Object.keys(result.metafile!.inputs).flatMap((input) => inputFile(input, root) ?? []))];
  // Read after the build: a file changed while esbuild read it hashes differently next time, and rebuilds.
  const manifest: Manifest = { key, inputs: files.sort().map((file) => [file, hashOf(path.join(root, file))!]) };
  // Written beside, then swapped in, so a synthesis stopped halfway leaves no entry without its outputs.
  const staging = `${entryDir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  cpSync(outdir, path.join(staging, 'out'), { recursive: true });
  writeFileSync(path.join(staging, 'manifest.json'), JSON.stringify(manifest));
  rmSync(entryDir, { recursive: true, force: true });
  renameSync(staging, entryDir);
  return 'built';
}
