import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type BuildResult, type Plugin } from 'esbuild';

/** The repository root: fixtures resolve the `#...` aliases and node_modules from it. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a plugin test bundles: a fixture file or inline source. */
export type ProbeInput = Pick<BuildOptions, 'entryPoints' | 'stdin'>;

/** One esbuild run as the plugin tests make it: a Node ESM bundle from the repository root, nothing printed. */
export function buildProbe<const O extends BuildOptions>(options: O): Promise<BuildResult<O>> {
  // The defaults add only options BuildOptions names, so the result keeps the caller's shape.
  const withDefaults = { bundle: true, format: 'esm', platform: 'node', logLevel: 'silent', absWorkingDir: ROOT, ...options } as BuildOptions;
  return build(withDefaults) as Promise<BuildResult<O>>;
}

/** The input files a bundle reached (its metafile), built in memory. */
export async function inputsOfBundle(input: ProbeInput, plugins: Plugin[]): Promise<string[]> {
  const { metafile } = await buildProbe({ ...input, mainFields: ['module', 'main'], write: false, outdir: 'out', metafile: true, plugins });
  return Object.keys(metafile.inputs);
}

/** The minified text of a bundle, built in memory. */
export async function textOfBundle(input: ProbeInput, plugins: Plugin[]): Promise<string> {
  const { outputFiles } = await buildProbe({ ...input, minify: true, write: false, outdir: 'out', plugins });
  return outputFiles.map((f) => f.text).join('\n');
}
