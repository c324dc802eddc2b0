import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { LAMBDA_ENTRY_NAME, reachableOutputs } from '../outputs';

/**
 * drop-unreachable-chunks: no chunk that nothing can load is deployed.
 *
 * Why: esbuild writes a chunk for every `import()` in the graph, also for one whose call tree shaking
 * removed (viem's index reaches `import('isows')` of its unused websocket transport, `ws`; the skills
 * function's unused `launcher()` reaches the ECS client). Nothing imports such a chunk, so its code can
 * never run, but it was deployed and counted against Lambda's package limit. After the build, every
 * output the entry cannot reach statically or through `import()` is deleted (from disk, or from
 * `outputFiles` when nothing is written) and from the metafile, which this plugin asks esbuild for.
 *
 * What it saves: package size of gateway and skills (the package sizes and the packages over the hard
 * limit in bench/results.json; docs/architecture.md §11).
 *
 * What would break it: an esbuild upgrade that changes the metafile's `imports` of an output (their
 * `kind`s) would make it delete a chunk that can load; one that stops writing these chunks would leave
 * it nothing to do (test/unit/build-drop-unreachable-chunks.test.ts).
 */
export const dropUnreachableChunks = (outdir: string): Plugin => ({
  name: 'drop-unreachable-chunks',
  setup(esbuild) {
    esbuild.initialOptions.metafile = true;
    const workingDir = esbuild.initialOptions.absWorkingDir ?? process.cwd();
    esbuild.onEnd((result) => {
      const metafile = result.metafile;
      if (!metafile || result.errors.length) return;
      const entry = path
        .relative(workingDir, path.resolve(workingDir, outdir, `${LAMBDA_ENTRY_NAME}.mjs`))
        .split(path.sep)
        .join('/');
      if (!metafile.outputs[entry]) return;
      const reachable = new Set(reachableOutputs(metafile, entry));
      const unreachable = Object.keys(metafile.outputs).filter((o) => o.endsWith('.mjs') && !reachable.has(o));
      const dropped = new Set(unreachable.flatMap((o) => [o, `${o}.map`]).filter((o) => metafile.outputs[o]));
      for (const output of dropped) {
        delete metafile.outputs[output];
        const file = path.resolve(workingDir, output);
        if (result.outputFiles) result.outputFiles = result.outputFiles.filter((f) => f.path !== file);
        else rmSync(file, { force: true });
      }
    });
  },
});
