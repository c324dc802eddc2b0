import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProbe } from '../helpers/plugin-build';
import { initLoadedOutputs, SPLIT_OUTPUT } from '#build/bundling';
import { lazyEntriesShareTheInit } from '#build/plugins/lazy-entries-share-the-init';

const dir = mkdtempSync(path.join(tmpdir(), 'build-lazy-entries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entry = path.join(dir, 'handler.ts');
// The init code uses x and y; one lazy module shares x with it, the other y: without the plugin, x and y
// are reached by different sets of entries and land in two init chunks.
writeFileSync(
  entry,
  "import { x } from './x';\nimport { y } from './y';\nexport const handler = async () => [x, y, (await import('./lazy-a')).a, (await import('./lazy-b')).b];\n",
);
writeFileSync(path.join(dir, 'x.ts'), "export const x = 'x';\n");
writeFileSync(path.join(dir, 'y.ts'), "export const y = 'y';\n");
writeFileSync(path.join(dir, 'lazy-a.ts'), "import { x } from './x';\nexport const a = `a${x}`;\n");
writeFileSync(path.join(dir, 'lazy-b.ts'), "import { y } from './y';\nexport const b = `b${y}`;\n");

const bundle = async (name: string, plugins: Plugin[]) => {
  const outdir = path.join(dir, name);
  const { metafile } = await buildProbe({ ...SPLIT_OUTPUT, entryPoints: { index: entry }, outdir, metafile: true, absWorkingDir: dir, plugins });
  return { init: initLoadedOutputs(metafile, `${name}/index.mjs`), handler: (await import(pathToFileURL(path.join(outdir, 'index.mjs')).href)).handler };
};

describe('lazy-entries-share-the-init (build/plugins)', () => {
  it('puts the init code in one chunk however the lazy modules share it, and the function answers the same', async () => {
    const split = await bundle('without', []);
    const shared = await bundle('with', [lazyEntriesShareTheInit(entry)]);
    expect(split.init).toHaveLength(3);
    expect(shared.init).toHaveLength(2);
    expect(await shared.handler()).toEqual(['x', 'y', 'ax', 'by']);
    expect(await shared.handler()).toEqual(await split.handler());
  });
});
