import { readFileSync } from 'node:fs';

/**
 * One result per file and contents for the rewrites of the plugins below, kept for the whole process:
 * every function's build loads the same contract, settings and AI SDK files, and a rewrite with
 * TypeScript's parser costs far more than the lookup (build/bundle-functions.ts builds all functions in
 * one process). Keyed by the contents too, so a file that changed between two builds is read again.
 */
export function sameFileSameResult<T>(rewrite: (source: string, fileName: string) => Promise<T>) {
  const results = new Map<string, { source: string; result: Promise<T> }>();
  return (fileName: string): Promise<T> => {
    const source = readFileSync(fileName, 'utf8');
    const known = results.get(fileName);
    if (known?.source === source) return known.result;
    const result = rewrite(source, fileName);
    results.set(fileName, { source, result });
    return result;
  };
}
