import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { contractWithoutDocs } from '#build/plugins/contract-without-docs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'build-contract-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entry = path.join(dir, 'handler.ts');
writeFileSync(entry, `import { metricsContract } from ${JSON.stringify(path.join(ROOT, 'contract/metrics.ts'))};\nexport const group = metricsContract;\n`);

const routeProse = 'Counted from the records the account stores';
const requestValidation = 'must be a whole number followed by m, h or d';

const bundleText = async (plugins: Plugin[]) => {
  const { outputFiles } = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'node',
    minify: true,
    write: false,
    outdir: path.join(dir, 'out'),
    logLevel: 'silent',
    absWorkingDir: ROOT,
    plugins,
  });
  return outputFiles.map((f) => f.text).join('\n');
};

describe('contract-without-docs (build/plugins)', () => {
  it("leaves a group's route prose out of a function's bundle and keeps its request validation", async () => {
    const whole = await bundleText([]);
    const stripped = await bundleText([contractWithoutDocs(entry)]);
    expect({ prose: whole.includes(routeProse), validation: whole.includes(requestValidation) }).toEqual({ prose: true, validation: true });
    expect({ prose: stripped.includes(routeProse), validation: stripped.includes(requestValidation) }).toEqual({ prose: false, validation: true });
    expect(stripped.length).toBeLessThan(whole.length);
  });
});
