import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedBuild, projectKeyOf } from '#build/bundle-cache';
import { SPLIT_OUTPUT } from '#build/bundling';

// A project of its own: a handler, a module it imports, a text file a plugin loads in its namespace, and a build/ folder.
const dir = mkdtempSync(path.join(tmpdir(), 'build-bundle-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
mkdirSync(path.join(dir, 'build'));
write('build/plugin.ts', 'export const setting = 1;\n');
write('handler.ts', "import { value } from './dep';\nimport text from 'text:greeting';\nexport const handler = () => [value, text];\n");
write('dep.ts', "export const value = 'first value';\n");
write('greeting.txt', 'first greeting');

// Loads `text:<name>` from <name>.txt as a module of the `text` namespace, with a query, as the platform's plugins name their modules.
const textModules: Plugin = {
  name: 'text-modules',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^text:/ }, (args) => ({ path: `${path.join(dir, args.path.slice(5))}.txt?as=text`, namespace: 'text' }));
    esbuild.onLoad({ filter: /.*/, namespace: 'text' }, (args) => ({ contents: readFileSync(args.path.replace(/\?.*$/, ''), 'utf8'), loader: 'text' }));
  },
};

// Under cdk.out, as a synthesis writes them: the project's list of source files leaves that folder out.
const outdir = path.join(dir, 'cdk.out', 'function');
const cacheDir = path.join(dir, 'cdk.out', '.function-bundle-cache');
const options = (extra: BuildOptions = {}) => ({
  ...SPLIT_OUTPUT,
  bundle: true,
  format: 'esm' as const,
  platform: 'node' as const,
  entryPoints: { index: path.join(dir, 'handler.ts') },
  outdir,
  absWorkingDir: dir,
  logLevel: 'silent' as const,
  plugins: [textModules],
  ...extra,
});
const run = (extra?: BuildOptions) => cachedBuild(options(extra), { dir: cacheDir, projectKey: projectKeyOf(dir) });
const bundled = () => readFileSync(path.join(outdir, 'index.mjs'), 'utf8');

describe('bundle-cache (build/bundle-cache.ts)', () => {
  it('reuses the outputs of a build whose inputs and settings did not change, byte for byte', async () => {
    expect(await run()).toBe('built');
    const first = bundled();
    rmSync(outdir, { recursive: true, force: true });
    expect(await run()).toBe('reused');
    expect(bundled()).toBe(first);
    expect(readdirSync(outdir)).toEqual(['index.mjs']);
  });

  it('rebuilds when a file the build read changed, its own or one a plugin loaded in its namespace', async () => {
    await run();
    write('dep.ts', "export const value = 'second value';\n");
    expect(await run()).toBe('built');
    expect(bundled()).toContain('second value');
    write('greeting.txt', 'second greeting');
    expect(await run()).toBe('built');
    expect(bundled()).toContain('second greeting');
    expect(await run()).toBe('reused');
  });

  it('rebuilds when a setting, a file under build/ or the list of source files changed', async () => {
    await run();
    expect(await run({ minify: true })).toBe('built');
    expect(await run()).toBe('built');
    write('build/plugin.ts', 'export const setting = 2;\n');
    expect(await run()).toBe('built');
    // A new file an import could now resolve to (dep.ts beside dep/index.ts, say) is a change, though no input changed.
    write('other.ts', 'export {};\n');
    expect(await run()).toBe('built');
    expect(await run()).toBe('reused');
  });
});
