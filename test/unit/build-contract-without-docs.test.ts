import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, textOfBundle } from '../helpers/plugin-build';
import { contractWithoutDocs } from '#build/plugins/contract-without-docs';

const dir = mkdtempSync(path.join(tmpdir(), 'build-contract-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entry = path.join(dir, 'handler.ts');
writeFileSync(entry, `import { metricsContract } from ${JSON.stringify(path.join(ROOT, 'contract/metrics.ts'))};\nexport const group = metricsContract;\n`);
const skillsEntry = path.join(dir, 'skills-handler.ts');
writeFileSync(skillsEntry, `import { skillsContract } from ${JSON.stringify(path.join(ROOT, 'contract/skills.ts'))};\nexport const group = skillsContract;\n`);

const routeProse = 'Counted from the records the account stores';
const requestValidation = 'must be a whole number followed by m, h or d';

const bundleText = (plugins: Plugin[], from = entry) => textOfBundle({ entryPoints: [from] }, plugins);

describe('contract-without-docs (build/plugins)', () => {
  it("leaves a group's route prose out of a function's bundle and keeps its request validation", async () => {
    const whole = await bundleText([]);
    const stripped = await bundleText([contractWithoutDocs(entry)]);
    expect({ prose: whole.includes(routeProse), validation: whole.includes(requestValidation) }).toEqual({ prose: true, validation: true });
    expect({ prose: stripped.includes(routeProse), validation: stripped.includes(requestValidation) }).toEqual({ prose: false, validation: true });
    expect(stripped.length).toBeLessThan(whole.length);
  });

  it("leaves the skills' action bodies and examples (contract/skill-actions) out of a bundle of the skills contract", async () => {
    // A treasury action's description, reached through the table of contract/skill-actions/index.ts only.
    const example = 'with totals per asset';
    const whole = await bundleText([], skillsEntry);
    const stripped = await bundleText([contractWithoutDocs(skillsEntry)], skillsEntry);
    expect(whole.includes(example)).toBe(true);
    expect(stripped.includes(example)).toBe(false);
    expect(stripped).toContain('/api/skills/');
  });
});
