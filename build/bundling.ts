import type { BuildOptions } from 'esbuild';
import { aiSdkZodCopy } from './plugins/ai-sdk-zod-copy';
import { contractWithoutDocs } from './plugins/contract-without-docs';
import { dropUnreachableChunks } from './plugins/drop-unreachable-chunks';
import { lazyEntriesShareTheInit } from './plugins/lazy-entries-share-the-init';
import { sdkBarrelsPerImporter } from './plugins/sdk-barrels-per-importer';
import { settingsForTheFunctions } from './plugins/settings-for-the-functions';
import { LAMBDA_ENTRY_NAME } from './outputs';
import { AI_DEFAULT_PROVIDER, CREDENTIALS_SHIM, REPLACED_CREDENTIAL_PROVIDER, ZOD_MINI, ZOD_V3, ZOD_WITHOUT_LOCALES } from './substitutes';

/**
 * How every Lambda of the platform is bundled (docs/architecture.md §11), in one place: PlatformFunction
 * runs esbuild with `lambdaBuildOptions` in CDK's local bundling, and the bench (bench/bundle.ts) builds
 * with the same function, so the sizes it reports are the sizes that deploy. Plain esbuild options, no
 * CDK import, so the bench loads nothing but esbuild.
 * Each esbuild plugin lives in build/plugins/, with why it exists, what it saves and what would break it;
 * the modules the bundles take instead of a package in build/substitutes.ts.
 */

export { initLoadedOutputs, LAMBDA_ENTRY_NAME, reachableOutputs } from './outputs';

/** Lets the bundled SDK and other CommonJS dependencies `require` Node built-ins from the ESM bundle. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * The esbuild settings of every function's code (the agent runtime's image reuses them too, as one
 * file); `lambdaBuildOptions` adds how a function's output is laid out.
 */
export const LAMBDA_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  // Prefer the ESM builds of dependencies: they tree-shake, the CommonJS ones do not.
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  // An external source map: stack traces need only the mappings, the sources would double the asset.
  sourcemap: true,
  sourcesContent: false,
  // The AWS SDK is bundled, not taken from the runtime: pinned versions, and only what is used.
  external: [],
  alias: {
    [REPLACED_CREDENTIAL_PROVIDER]: CREDENTIALS_SHIM,
    zod: ZOD_WITHOUT_LOCALES,
    'zod/v4': ZOD_WITHOUT_LOCALES,
    'zod/mini': ZOD_MINI,
    // The MCP SDK's JSON Schema conversion imports the mini API by its older name.
    'zod/v4-mini': ZOD_MINI,
    'zod/v3': ZOD_V3,
    '@ai-sdk/gateway': AI_DEFAULT_PROVIDER,
  },
  plugins: [aiSdkZodCopy, sdkBarrelsPerImporter],
} satisfies BuildOptions;

/**
 * A function deploys as `index.mjs` (so Lambda's handler stays `index.<export>`) plus `chunks/`. With
 * code splitting, every `import()` in the function's graph becomes a chunk that Node parses and runs
 * only when that import first runs: a library only some routes need (KMS, SES, Stripe, the AI SDK...)
 * costs nothing at a cold start of the others. Modules two chunks share land in a chunk of their own,
 * imported statically by both. The banner is written at the top of every chunk, so a chunk that
 * `require`s a Node built-in has its own `require`; each chunk gets its own source map.
 */
export const SPLIT_OUTPUT = {
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
} satisfies BuildOptions;

/** The complete esbuild options of one function: its handler file bundled into `outdir`. */
export function lambdaBuildOptions(entry: string, outdir: string) {
  return {
    ...LAMBDA_BUNDLE,
    ...SPLIT_OUTPUT,
    plugins: [...LAMBDA_BUNDLE.plugins, lazyEntriesShareTheInit(entry), contractWithoutDocs(entry), settingsForTheFunctions, dropUnreachableChunks(outdir)],
    entryPoints: { [LAMBDA_ENTRY_NAME]: entry },
    outdir,
  } satisfies BuildOptions;
}
