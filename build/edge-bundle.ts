/**
 * Bundles the agent edge (edge/main.ts) into one ESM file for its container image (edge/Dockerfile
 * runs this in its build stage), the way build/runtime.ts bundles the runtime: the image then holds
 * Node 22 and this file, with no tsx, TypeScript or node_modules at run time.
 * Usage: `tsx build/edge-bundle.ts <outfile>`.
 */
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { RUNTIME_BUNDLE } from './runtime';

export const EDGE_ENTRY = fileURLToPath(new URL('../edge/main.ts', import.meta.url));
/** The edge image's Dockerfile, relative to the repository root (its build context). */
export const EDGE_DOCKERFILE = 'edge/Dockerfile';
/**
 * What the edge's build stage copies from the repository: edge/ and the folders its bundle may
 * reach. The CDK image asset admits exactly these (lib/constructs/edge.ts), so a change elsewhere
 * (the console, the tests, a function folder) does not rebuild the image.
 */
export const EDGE_CONTEXT_PATHS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'build/',
  'contract/',
  'platform/',
  'adapters/',
  'data/',
  'domain/',
  'http/',
  'edge/',
] as const;

// The runtime's bundle settings (the functions' without their Lambda-only parts), on the edge's entry.
export const EDGE_BUNDLE = { ...RUNTIME_BUNDLE, entryPoints: [EDGE_ENTRY] } satisfies BuildOptions;

export async function buildEdge(outfile: string) {
  const { build } = await import('esbuild');
  return build({ ...EDGE_BUNDLE, outfile, metafile: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outfile = process.argv[2];
  if (!outfile) {
    process.stderr.write('usage: tsx build/edge-bundle.ts <outfile>\n');
    process.exit(2);
  }
  await buildEdge(outfile);
}
