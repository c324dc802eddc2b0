import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProbe } from '../helpers/plugin-build';
import { SPLIT_OUTPUT } from '#build/bundling';
import { dropUnreachableChunks } from '#build/plugins/drop-unreachable-chunks';

const dir = mkdtempSync(path.join(tmpdir(), 'build-drop-unreachable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(path.join(dir, 'handler.ts'), "import { used } from './lib';\nexport const handler = () => used();\n");
// `unused` is tree-shaken, but esbuild still writes the chunk its import() would load.
writeFileSync(path.join(dir, 'lib.ts'), "export const used = () => 1;\nexport const unused = () => import('./heavy');\n");
writeFileSync(path.join(dir, 'heavy.ts'), "export const heavy = 'never loaded';\n");

const bundle = async (name: string, plugins: (outdir: string) => Plugin[]) => {
  const outdir = path.join(dir, name);
  const { metafile } = await buildProbe({
    ...SPLIT_OUTPUT,
    entryPoints: { index: path.join(dir, 'handler.ts') },
    outdir,
    metafile: true,
    absWorkingDir: dir,
    plugins: plugins(outdir),
  });
  const chunks = existsSync(path.join(outdir, 'chunks')) ? readdirSync(path.join(outdir, 'chunks')) : [];
  return { chunks, outputs: Object.keys(metafile.outputs) };
};

describe('drop-unreachable-chunks (build/plugins)', () => {
  it('deletes the chunk of an import() that tree shaking removed, from disk and from the metafile', async () => {
    const kept = await bundle('without', () => []);
    expect(kept.chunks.filter((c) => c.startsWith('heavy-'))).toHaveLength(1);
    const dropped = await bundle('with', (outdir) => [dropUnreachableChunks(outdir)]);
    expect(dropped.chunks).toEqual([]);
    expect(dropped.outputs).toEqual(['with/index.mjs']);
  });
});
