import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SDK_BARREL_NAMESPACE, sdkBarrelsPerImporter } from '#build/plugins/sdk-barrels-per-importer';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMPORTER = fileURLToPath(new URL('./fixtures/build-sdk-barrel-importer.ts', import.meta.url));

const inputsOfBundle = async (plugins: Plugin[]) => {
  const { metafile } = await build({
    entryPoints: [IMPORTER],
    bundle: true,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
    plugins,
  });
  return Object.keys(metafile.inputs);
};

describe('sdk-barrels-per-importer (build/plugins)', () => {
  it('gives an importer of one name a barrel of that name alone, so the other protocols are not reached', async () => {
    const otherProtocol = (i: string) => i.endsWith('/protocols/HttpBindingProtocol.js');
    const cut = await inputsOfBundle([sdkBarrelsPerImporter]);
    const whole = await inputsOfBundle([]);
    expect(whole.some(otherProtocol)).toBe(true);
    expect(cut.some(otherProtocol)).toBe(false);
    expect(cut.some((i) => i.startsWith(`${SDK_BARREL_NAMESPACE}:`) && i.endsWith('?escapeUri'))).toBe(true);
    expect(cut.some((i) => i.endsWith('/util-uri-escape/escape-uri.js'))).toBe(true);
  });
});
