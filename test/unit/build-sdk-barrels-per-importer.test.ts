import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { inputsOfBundle } from '../helpers/plugin-build';
import { SDK_BARREL_NAMESPACE, sdkBarrelsPerImporter } from '#build/plugins/sdk-barrels-per-importer';

const IMPORTER = fileURLToPath(new URL('./fixtures/build-sdk-barrel-importer.ts', import.meta.url));

const bundleInputs = (plugins: Plugin[]) => inputsOfBundle({ entryPoints: [IMPORTER] }, plugins);

describe('sdk-barrels-per-importer (build/plugins)', () => {
  it('gives an importer of one name a barrel of that name alone, so the other protocols are not reached', async () => {
    const otherProtocol = (i: string) => i.endsWith('/protocols/HttpBindingProtocol.js');
    const cut = await bundleInputs([sdkBarrelsPerImporter]);
    const whole = await bundleInputs([]);
    expect(whole.some(otherProtocol)).toBe(true);
    expect(cut.some(otherProtocol)).toBe(false);
    expect(cut.some((i) => i.startsWith(`${SDK_BARREL_NAMESPACE}:`) && i.endsWith('?escapeUri'))).toBe(true);
    expect(cut.some((i) => i.endsWith('/util-uri-escape/escape-uri.js'))).toBe(true);
  });
});
