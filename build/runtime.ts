/**
 * Bundles the agent runtime into one ESM file for its container image (runtime/Dockerfile runs
 * this in its build stage): the image then holds Node 22 and this file, with no tsx, TypeScript or
 * node_modules at run time. Usage: `tsx build/runtime.ts <outfile>`.
 */
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { LAMBDA_BUNDLE } from './bundling';

export const RUNTIME_ENTRY = fileURLToPath(new URL('../runtime/server.ts', import.meta.url));

// The functions' esbuild settings (build/bundling.ts) without their Lambda-only parts: the credentials
// shim (a task gets its role's credentials from the ECS endpoint, which the full chain reads) and the
// source map (one more file in the image for stack traces the runtime's short code rarely needs).
const { alias: _lambdaCredentials, sourcemap: _sourcemap, sourcesContent: _sourcesContent, ...FUNCTION_BUNDLE } = LAMBDA_BUNDLE;

export const RUNTIME_BUNDLE = {
  ...FUNCTION_BUNDLE,
  entryPoints: [RUNTIME_ENTRY],
  // ws's optional native speed-ups: it falls back to JavaScript when they are absent.
  external: ['bufferutil', 'utf-8-validate'],
  logLevel: 'warning',
} satisfies BuildOptions;

export async function buildRuntime(outfile: string) {
  return build({ ...RUNTIME_BUNDLE, outfile, metafile: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outfile = process.argv[2];
  if (!outfile) {
    process.stderr.write('usage: tsx build/runtime.ts <outfile>\n');
    process.exit(2);
  }
  await buildRuntime(outfile);
}
