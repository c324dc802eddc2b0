import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { sameFileSameResult } from './same-file-same-result';

/**
 * settings-for-the-functions: what only the stack reads of the settings stays out of the functions.
 *
 * Why: every setting of platform/config.ts is declared as data: its schema and default, which the
 * function parses, and its description, whether it is a secret, set by the stack or local only, which
 * lib/settings.ts (CDK) reads and no function does, yet each function would carry them for every
 * section it reads. platform/config.ts is loaded with those removed from each setting (an object with
 * a `schema`); the local stack and the tests run the sources, with everything.
 *
 * What it saves: part of every function's init (bench/results.json; docs/architecture.md §11).
 *
 * What would break it: a TypeScript upgrade that changes the compiler API it rewrites with, or a
 * settings declaration without its `schema` key (test/unit/build-settings-for-the-functions.test.ts,
 * test/infra/lazy-config.test.ts).
 */
const CONFIG_FILE = fileURLToPath(new URL('../../platform/config.ts', import.meta.url));
const FOR_THE_STACK_ONLY = new Set(['description', 'secret', 'setByStack', 'localOnly']);

const settingsOfTheFunctions = sameFileSameResult(settingsAsFunctionsReadThem);

export const settingsForTheFunctions: Plugin = {
  name: 'settings-for-the-functions',
  setup(esbuild) {
    esbuild.onLoad({ filter: new RegExp(`^${CONFIG_FILE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }, async (args) => ({
      contents: await settingsOfTheFunctions(args.path),
      loader: 'ts',
    }));
  },
};

/** `source` (platform/config.ts) with only what a function reads of each setting. */
export async function settingsAsFunctionsReadThem(source: string, fileName = 'config.ts'): Promise<string> {
  const ts = (await import('typescript')).default;
  type Node = import('typescript').Node;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const nameOf = (p: import('typescript').ObjectLiteralElementLike) => (p.name && ts.isIdentifier(p.name) ? p.name.text : undefined);
  const strip: import('typescript').TransformerFactory<import('typescript').SourceFile> = (context) => {
    const visit = (node: Node): Node => {
      const visited = ts.visitEachChild(node, visit, context);
      if (!ts.isObjectLiteralExpression(visited) || !visited.properties.some((p) => nameOf(p) === 'schema')) return visited;
      return context.factory.updateObjectLiteralExpression(
        visited,
        visited.properties.filter((p) => !FOR_THE_STACK_ONLY.has(nameOf(p) ?? '')),
      );
    };
    return (sourceFile) => ts.visitNode(sourceFile, visit) as import('typescript').SourceFile;
  };
  const [stripped] = ts.transform(file, [strip]).transformed;
  return ts.createPrinter().printFile(stripped!);
}
