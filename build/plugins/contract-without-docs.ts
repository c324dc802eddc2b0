import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { sameFileSameResult } from './same-file-same-result';

/**
 * contract-without-docs: the contract's documentation stays out of the functions that do not serve it.
 *
 * Why: a route's `summary`, `description` and `responses` (and a group's `description`) are read by
 * the OpenAPI document only (contract/openapi.ts), yet every function carried the prose and the
 * response schemas' factories of its group. Each contract file is loaded with those properties
 * removed from its route and group objects (objects with an `operation`, or a `group` and `routes`),
 * and every `lazySchema(…)` call marked pure, so the response schemas and what only they referenced
 * are tree-shaken. The function whose handler loads the document builder (`contract/document`:
 * api-document) keeps them all; the local stack and the tests run the sources, with everything.
 * The skills' action bodies and examples (contract/skill-actions/index.ts, the table contract/skills.ts
 * builds each skill route's body and example from) are documentation in the same sense: the skill
 * routes validate in the handler, each skill's module with its own file of contract/skill-actions.
 * contract/skills.ts gets an empty table instead, so the table's schema code stays out of the skills
 * function's cold start.
 *
 * What it saves: part of every HTTP function's init (bench/results.json; docs/architecture.md §11).
 *
 * What would break it: a TypeScript upgrade that changes the compiler API it rewrites with
 * (createSourceFile, transform, the printer), an esbuild upgrade that stops honouring a pure
 * annotation at a call, or a contract that names its routes' keys otherwise
 * (test/unit/build-contract-without-docs.test.ts; the api-document test of test/infra/bundles.test.ts).
 */
const CONTRACT_DIR = fileURLToPath(new URL('../../contract/', import.meta.url));
const CONTRACT_FILE = new RegExp(`^${CONTRACT_DIR.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.+\\.ts$`);
const DOC_PROPERTIES = new Set(['summary', 'description', 'responses']);
const DOCUMENT_BUILDER = path.join(CONTRACT_DIR, 'document');
const isDocumentBuilder = (resolveDir: string, specifier: string) =>
  specifier === '#contract/document' || path.resolve(resolveDir, specifier) === DOCUMENT_BUILDER;

const contractWithoutItsDocs = sameFileSameResult(withoutContractDocs);
const SKILLS_CONTRACT = path.join(CONTRACT_DIR, 'skills.ts');
export const NO_SKILL_ACTION_BODIES_NAMESPACE = 'no-skill-action-bodies';

export const contractWithoutDocs = (entry: string): Plugin => ({
  name: 'contract-without-docs',
  setup(esbuild) {
    const entryFile = path.resolve(esbuild.initialOptions.absWorkingDir ?? process.cwd(), entry);
    if (/contract\/document['"]/.test(readFileSync(entryFile, 'utf8'))) return;
    esbuild.onLoad({ filter: CONTRACT_FILE }, async (args) => ({
      contents: await contractWithoutItsDocs(args.path),
      loader: 'ts',
    }));
    esbuild.onResolve({ filter: /^\.\/skill-actions$/ }, (args) =>
      args.importer === SKILLS_CONTRACT ? { path: 'skill-actions', namespace: NO_SKILL_ACTION_BODIES_NAMESPACE, sideEffects: false } : undefined,
    );
    esbuild.onLoad({ filter: /.*/, namespace: NO_SKILL_ACTION_BODIES_NAMESPACE }, () => ({
      contents: 'export const SKILL_ACTION_BODIES = {};',
      loader: 'js',
    }));
    // A function that reached the document builder other than from its handler would serve a document without its prose: refused.
    esbuild.onResolve({ filter: /(^|\/)document$/ }, (args) =>
      isDocumentBuilder(args.resolveDir, args.path)
        ? {
            errors: [
              {
                text: `${entry} reaches the OpenAPI document builder (${args.importer}) but its handler does not import it: the contract's documentation would be left out`,
              },
            ],
          }
        : undefined,
    );
  },
});

/** `source` (a contract module) without the documentation properties of its route and group objects. */
export async function withoutContractDocs(source: string, fileName = 'contract.ts'): Promise<string> {
  const ts = (await import('typescript')).default;
  type Node = import('typescript').Node;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const nameOf = (p: import('typescript').ObjectLiteralElementLike) => (p.name && ts.isIdentifier(p.name) ? p.name.text : undefined);
  const isDocumented = (o: import('typescript').ObjectLiteralExpression) => {
    const names = new Set(o.properties.map(nameOf));
    return names.has('operation') || (names.has('group') && names.has('routes'));
  };
  const strip: import('typescript').TransformerFactory<import('typescript').SourceFile> = (context) => {
    const visit = (node: Node): Node => {
      const visited = ts.visitEachChild(node, visit, context);
      // esbuild honours a pure annotation across files only at the call: one per lazySchema call.
      if (ts.isCallExpression(visited) && ts.isIdentifier(visited.expression) && visited.expression.text === 'lazySchema')
        return ts.addSyntheticLeadingComment(visited, ts.SyntaxKind.MultiLineCommentTrivia, '@__PURE__', false);
      if (!ts.isObjectLiteralExpression(visited) || !isDocumented(visited)) return visited;
      return context.factory.updateObjectLiteralExpression(
        visited,
        visited.properties.filter((p) => !DOC_PROPERTIES.has(nameOf(p) ?? '')),
      );
    };
    return (sourceFile) => ts.visitNode(sourceFile, visit) as import('typescript').SourceFile;
  };
  const [stripped] = ts.transform(file, [strip]).transformed;
  return ts.createPrinter().printFile(stripped!);
}
