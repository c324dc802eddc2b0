import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { sourcesOf } from '../layers';

/**
 * lazy-entries-share-the-init: one init chunk instead of dozens.
 *
 * Why: esbuild puts a file in a chunk per set of entries (the function and each `import()` target)
 * whose static graph reaches it, so every lazy module sharing another subset of the init code (the
 * skills function's skills, each with its own mix of data modules) cut the init into its own set of
 * chunks, each one more module load (resolve, read, link) at a cold start. Each `import()` of a
 * project file here resolves to a module that imports the function's entry first and re-exports the
 * target, so every lazy entry reaches all of the init code, which therefore lands in one chunk. At run
 * time nothing changes: a lazy chunk loads after the entry has run, so its extra static import is of
 * modules already evaluated; what only lazy modules use stays lazy.
 *
 * What it saves: files loaded at a cold start, hence init time over the baseline (the init ratios in
 * bench/results.json; docs/architecture.md §11; test/infra/lazy-skills.test.ts counts the files).
 *
 * What would break it: an esbuild upgrade that changes how code splitting assigns files to chunks, or
 * stops passing `kind: 'dynamic-import'` to onResolve (test/unit/build-lazy-entries-share-the-init.test.ts).
 */
export const LAZY_ENTRY_NAMESPACE = 'lazy-entry';
const NODE_MODULES = /[\\/]node_modules[\\/]/;

export const lazyEntriesShareTheInit = (entry: string): Plugin => ({
  name: 'lazy-entries-share-the-init',
  setup(esbuild) {
    const entryFile = path.resolve(esbuild.initialOptions.absWorkingDir ?? process.cwd(), entry);
    // Only the specifiers the project's own files pass to `import()`: a filter matching every import
    // would send each one, node_modules' thousands included, from esbuild to JavaScript and back.
    const specifiers = [...dynamicImportSpecifiersUnder(esbuild.initialOptions.absWorkingDir ?? process.cwd())];
    if (!specifiers.length) return;
    esbuild.onResolve({ filter: new RegExp(`^(?:${specifiers.map(escapeRegExp).join('|')})$`) }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === LAZY_ENTRY_NAMESPACE || NODE_MODULES.test(args.importer)) return undefined;
      const target = await esbuild.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: LAZY_ENTRY_NAMESPACE,
      });
      // Project TypeScript only: the platform's lazy modules (a CommonJS file's exports are left as esbuild maps them).
      if (target.errors.length || target.namespace !== 'file' || target.external || !/\.m?ts$/.test(target.path) || NODE_MODULES.test(target.path))
        return undefined;
      return { path: target.path, namespace: LAZY_ENTRY_NAMESPACE };
    });
    esbuild.onLoad({ filter: /.*/, namespace: LAZY_ENTRY_NAMESPACE }, (args) => {
      const target = JSON.stringify(args.path);
      const withDefault = /\bexport\s+default\b/.test(readFileSync(args.path, 'utf8')) ? `export { default } from ${target};\n` : '';
      return { contents: `import ${JSON.stringify(entryFile)};\nexport * from ${target};\n${withDefault}`, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
});

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(?:'([^'\n]+)'|"([^"\n]+)"|`([^`$\n]+)`)/g;
const specifiersUnder = new Map<string, Set<string>>();

/**
 * Every string a source file under `root` (the files the layout check reads) passes to `import()`,
 * read once per process: esbuild resolves only such literal specifiers, so none of the project's lazy
 * imports is missed, and a comment or string that looks like one only widens the filter.
 */
export function dynamicImportSpecifiersUnder(root: string): Set<string> {
  const known = specifiersUnder.get(root);
  if (known) return known;
  const specifiers = new Set<string>();
  for (const file of sourcesOf(root))
    for (const m of readFileSync(path.join(root, file), 'utf8').matchAll(DYNAMIC_IMPORT)) specifiers.add((m[1] ?? m[2] ?? m[3])!);
  specifiersUnder.set(root, specifiers);
  return specifiers;
}
