import type { Metafile } from 'esbuild';

/** The entry's name in the output folder: `index.mjs`. */
export const LAMBDA_ENTRY_NAME = 'index';

/**
 * The outputs a function's cold start parses and runs: its entry and, transitively, the chunks it
 * imports statically (metafile paths). The other chunks load on the first `import()` that needs them.
 */
export function initLoadedOutputs(metafile: Metafile, entry: string): string[] {
  return walkOutputs(metafile, entry, ['import-statement']);
}

/**
 * Every output a function can ever load: its entry and the chunks reached statically or through
 * `import()`. esbuild also writes a chunk for an `import()` whose call tree shaking removed; nothing
 * loads that one, so the code in it cannot run (`dropUnreachableChunks` deletes it).
 */
export function reachableOutputs(metafile: Metafile, entry: string): string[] {
  return walkOutputs(metafile, entry, ['import-statement', 'dynamic-import']);
}

function walkOutputs(metafile: Metafile, entry: string, kinds: string[]): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length) {
    const output = pending.pop()!;
    if (seen.has(output)) continue;
    seen.add(output);
    // Node built-ins are imports too, but not outputs.
    for (const i of metafile.outputs[output]!.imports) if (kinds.includes(i.kind) && metafile.outputs[i.path]) pending.push(i.path);
  }
  return [...seen];
}
