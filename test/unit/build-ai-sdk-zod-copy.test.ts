import type { Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { inputsOfBundle, ROOT } from '../helpers/plugin-build';
import { AI_SDK_ZOD_MEMBERS_NAMESPACE, AI_SDK_ZOD_NAMESPACE, aiSdkZodCopy } from '#build/plugins/ai-sdk-zod-copy';

// The platform's zod/mini at init and the AI SDK behind an import(), as in the functions that call models.
const probe = {
  stdin: {
    contents: "import * as z from 'zod/mini';\nexport const id = z.string();\nexport const sdk = () => import('ai');",
    resolveDir: ROOT,
    sourcefile: 'probe.ts',
    loader: 'ts' as const,
  },
};
const bundleInputs = (plugins: Plugin[]) => inputsOfBundle(probe, plugins);

describe('ai-sdk-zod-copy (build/plugins)', () => {
  it("resolves the AI SDK's zod imports into a copy of their own, narrowed to the members each importer reads", async () => {
    const shared = await bundleInputs([]);
    const copied = await bundleInputs([aiSdkZodCopy]);
    const inCopy = (i: string) => i.startsWith(`${AI_SDK_ZOD_NAMESPACE}:`);
    expect(shared.filter(inCopy)).toEqual([]);
    expect(copied.some((i) => inCopy(i) && i.endsWith('zod/v4/core/schemas.js'))).toBe(true);
    expect(copied.some((i) => i.startsWith(`${AI_SDK_ZOD_MEMBERS_NAMESPACE}:`))).toBe(true);
    // The platform's own zod/mini is still the real one.
    expect(copied.some((i) => !i.includes(':') && i.endsWith('zod/v4/core/schemas.js'))).toBe(true);
  });
});
