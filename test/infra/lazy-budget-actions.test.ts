import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { initLoadedOutputs, lambdaBuildOptions, reachableOutputs } from '../../lib/bundling';

/**
 * Every function that meters a model call (the gateway, ai, agent-chat...) checks the spending caps
 * after the call (shared/ai/budget-guard.ts); what a crossed cap does (the emails, pausing an agent,
 * stopping the instance) is loaded by the first cap a container sees at 80 %, not at its cold start
 * (issue 16). Built as the gateway deploys: its own entry, code splitting.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Only a crossed or raised cap needs these. */
const CROSSED_CAP_ONLY = ['shared/ai/budget-actions.ts', 'shared/adapters/email.ts', 'shared/adapters/launcher.ts', 'shared/db/instances.ts'];

let metafile: Metafile;
let entry: string;

/** The source files with code in the given outputs. */
const inputsOf = (outputs: string[]) =>
  outputs.flatMap((o) =>
    Object.entries(metafile.outputs[o]!.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([name]) => name),
  );

beforeAll(async () => {
  const outdir = path.join(ROOT, '.lazy-budget-actions-check');
  const result = await build({
    ...lambdaBuildOptions(path.join(ROOT, 'functions/gateway/handler.ts'), outdir),
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  metafile = result.metafile;
  entry = Object.keys(metafile.outputs).find((k) => path.basename(k) === 'index.mjs')!;
}, 60_000);

describe("the spending caps' actions in the gateway", () => {
  it('are not loaded at its cold start, while the check after each call is', () => {
    const atInit = inputsOf(initLoadedOutputs(metafile, entry));
    expect(atInit).toContain('shared/ai/budget-guard.ts');
    expect(atInit.filter((i) => CROSSED_CAP_ONLY.includes(i))).toEqual([]);
  });

  it('are in its bundle, behind an import()', () => {
    const ever = inputsOf(reachableOutputs(metafile, entry));
    for (const file of CROSSED_CAP_ONLY) expect(ever, file).toContain(file);
  });
});
