import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLE } from '../../lib/bundling';
import { WORKERS } from '../../lib/constructs/functions';
import { contract } from '../../shared/contract';

/**
 * The libraries only some routes (or only a first call) need are loaded on that call, not at a
 * function's cold start (issue 16): built with code splitting, no function's init path (its entry
 * and the chunks it imports statically) holds any of them, while the functions that call them still
 * carry them in a lazy chunk. A static import anywhere in a function's graph fails this.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const LAZY_LIBRARIES = /node_modules\/(ai|@ai-sdk\/[^/]+|stripe|croner|hash-wasm|oauth4webapi)\//;

/** Functions that call each library: it must still be in their bundle, behind an `import()`. */
const CALLERS: Record<string, string[]> = {
  ai: ['ai', 'gateway', 'runtime-model', 'skills'],
  stripe: ['billing', 'card', 'provisioner'],
  croner: ['heartbeat', 'agent-autonomy'],
  'hash-wasm': ['accounts', 'settings'],
  oauth4webapi: ['oauth-sign-in'],
};

const folders = [...new Set([...contract.map((g) => g.group), ...WORKERS.map((w) => w.folder ?? w.name)])];

let outputs: Metafile['outputs'];
const entryOf = (folder: string) => Object.keys(outputs).find((k) => outputs[k]!.entryPoint === `functions/${folder}/handler.ts`)!;

/** The outputs a function loads: at init (static imports only) or ever (dynamic imports too). */
function reachable(folder: string, withDynamic: boolean): Set<string> {
  const seen = new Set<string>();
  const stack = [entryOf(folder)];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of outputs[file]!.imports) {
      if (outputs[i.path] && (i.kind === 'import-statement' || (withDynamic && i.kind === 'dynamic-import'))) stack.push(i.path);
    }
  }
  return seen;
}

const inputsOf = (files: Set<string>) =>
  [...files].flatMap((f) =>
    Object.entries(outputs[f]!.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([name]) => name),
  );

beforeAll(async () => {
  const result = await build({
    ...LAMBDA_BUNDLE,
    sourcemap: false,
    splitting: true,
    write: false,
    entryPoints: Object.fromEntries(folders.map((f) => [f, path.join(ROOT, 'functions', f, 'handler.ts')])),
    outdir: path.join(ROOT, '.lazy-libraries-build'),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    absWorkingDir: ROOT,
    metafile: true,
    logLevel: 'silent',
  });
  outputs = result.metafile.outputs;
}, 120_000);

describe('route-specific libraries behind dynamic import', () => {
  it("are in no function's init path", () => {
    for (const folder of folders) {
      const atInit = inputsOf(reachable(folder, false)).filter((i) => LAZY_LIBRARIES.test(i));
      expect(atInit, folder).toEqual([]);
    }
  });

  it('stay in the bundles of the functions that call them, in a lazy chunk', () => {
    for (const [library, callers] of Object.entries(CALLERS)) {
      const pattern = new RegExp(`node_modules/${library}/`);
      for (const folder of callers) {
        expect(folders, folder).toContain(folder);
        expect(
          inputsOf(reachable(folder, true)).some((i) => pattern.test(i)),
          `${library} in ${folder}`,
        ).toBe(true);
      }
    }
  });
});
