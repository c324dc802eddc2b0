import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { ZOD_WITHOUT_LOCALES } from '../substitutes';
import { sameFileSameResult } from './same-file-same-result';

/**
 * ai-sdk-zod-copy: the AI SDK's own copy of zod, and only the zod members each of its modules uses.
 *
 * Why: the AI SDK (loaded by `import()`, domain/ai/sdk/*) uses zod classic (`zod`, `zod/v4`), the
 * platform zod/mini; both are built on the same zod/v4/core/*.js files. esbuild splits by file, so a
 * core file reached at init through zod/mini lands in the init chunk with every part of it the lazy
 * AI SDK uses too. Resolving the AI SDK's zod imports into a namespace of their own makes esbuild
 * treat those files as other modules: the classic copy, core included, moves into the lazy chunks
 * with the SDK. And as the AI SDK imports zod as one namespace object (`import { z as z2 } from
 * "zod/v4"`), which esbuild cannot tree-shake, an importer that only reads members of its zod
 * bindings gets a module with just those members, from the same copy.
 * Two copies are safe because zod keeps its one registry on `globalThis.__zod_globalRegistry`
 * (descriptions and metadata set through either copy are seen by both) and `toJSONSchema` reads a
 * schema's `_zod` internals, not its class (test/infra/bundles.test.ts sends a tool schema to a fake
 * provider from a real bundle).
 *
 * What it saves: zod classic at the cold start of ai, gateway and runtime-model, and the zod API no
 * AI SDK module uses from their packages (the init and package sizes in bench/results.json;
 * docs/architecture.md §11).
 *
 * What would break it: an `ai` / `@ai-sdk/*` upgrade that imports zod otherwise (a default import,
 * another subpath, a binding passed as a value) keeps it working but falls back to the whole zod API
 * (bigger, not wrong); a zod upgrade that stops sharing its registry through `globalThis` or moves its
 * core files would make two copies disagree (test/unit/build-ai-sdk-zod-copy.test.ts and the AI tool
 * schema test of test/infra/bundles.test.ts catch either).
 */
export const AI_SDK_ZOD_NAMESPACE = 'ai-sdk-zod';
const zodMembersOf = sameFileSameResult((source, fileName) => zodMembersUsedBy(fileName, source));
const AI_SDK_FILE = /[\\/]node_modules[\\/](ai|@ai-sdk[\\/][^\\/]+)[\\/]/;

export const aiSdkZodCopy: Plugin = {
  name: 'ai-sdk-zod-copy',
  setup(esbuild) {
    // Same target as the `zod` alias below (locales trimmed), only in the other namespace; narrowed
    // to the members the importer uses when it can tell (zodMembersUsedBy).
    esbuild.onResolve({ filter: /^zod(\/v4)?$/ }, async (args) => {
      if (!AI_SDK_FILE.test(args.importer)) return undefined;
      const members = await zodMembersOf(args.importer);
      if (members) return { path: [...members].sort().join(','), namespace: AI_SDK_ZOD_MEMBERS_NAMESPACE, sideEffects: false };
      return { path: ZOD_WITHOUT_LOCALES, namespace: AI_SDK_ZOD_NAMESPACE, sideEffects: false };
    });
    esbuild.onLoad({ filter: /.*/, namespace: AI_SDK_ZOD_MEMBERS_NAMESPACE }, (args) => ({
      contents: zodMembersModule(args.path.split(',')),
      loader: 'js',
      resolveDir: path.dirname(ZOD_WITHOUT_LOCALES),
    }));
    esbuild.onResolve({ filter: /.*/, namespace: AI_SDK_ZOD_MEMBERS_NAMESPACE }, () => ({
      path: ZOD_WITHOUT_LOCALES,
      namespace: AI_SDK_ZOD_NAMESPACE,
      sideEffects: false,
    }));
    // Inside the copy, esbuild's own resolution (extensions, zod's package.json `sideEffects`), kept in the namespace.
    esbuild.onResolve({ filter: /^\./, namespace: AI_SDK_ZOD_NAMESPACE }, async (args) => {
      const resolved = await esbuild.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer });
      return { path: resolved.path, namespace: AI_SDK_ZOD_NAMESPACE, sideEffects: resolved.sideEffects, errors: resolved.errors };
    });
    esbuild.onLoad({ filter: /.*/, namespace: AI_SDK_ZOD_NAMESPACE }, (args) => ({
      contents: readFileSync(args.path, 'utf8'),
      loader: args.path.endsWith('.ts') ? 'ts' : 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

export const AI_SDK_ZOD_MEMBERS_NAMESPACE = 'ai-sdk-zod-members';

/**
 * The members an importer reads from its zod imports (`import { z }`, `{ z as x }`, `* as x` of
 * `zod` or `zod/v4`); undefined when it imports zod otherwise or uses such a binding other than as
 * `x.member`. TypeScript's parser (a devDependency, like esbuild) reads the importer, so strings,
 * regular expressions and properties of the same name are not mistaken for the binding.
 */
export async function zodMembersUsedBy(fileName: string, source: string): Promise<Set<string> | undefined> {
  const ts = (await import('typescript')).default;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const locals = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || !/^zod(\/v4)?$/.test(statement.moduleSpecifier.text)) continue;
    const clause = statement.importClause;
    const bindings = clause?.namedBindings;
    if (!clause || clause.name || !bindings) return undefined;
    if (ts.isNamespaceImport(bindings)) locals.add(bindings.name.text);
    else if (bindings.elements.length === 1 && (bindings.elements[0]!.propertyName ?? bindings.elements[0]!.name).text === 'z')
      locals.add(bindings.elements[0]!.name.text);
    else return undefined;
  }
  if (!locals.size) return undefined;
  const members = new Set<string>();
  let otherUse = false;
  const visit = (node: import('typescript').Node): void => {
    if (otherUse) return;
    if (ts.isImportDeclaration(node)) return;
    if (ts.isIdentifier(node) && locals.has(node.text)) {
      const parent = node.parent;
      if (ts.isPropertyAccessExpression(parent) && parent.expression === node && parent.name.text !== '__proto__') members.add(parent.name.text);
      // The name of a property, not the binding.
      else if (!((ts.isPropertyAccessExpression(parent) || ts.isPropertyAssignment(parent) || ts.isMethodDeclaration(parent)) && parent.name === node))
        otherUse = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return otherUse ? undefined : members;
}

/** `members` of zod as named exports and as the `z` object, read from zod's namespace (a missing one is undefined, as on `z`). */
export function zodMembersModule(members: readonly string[]): string {
  // Local names of their own: members such as `null` or `enum` are reserved words.
  const locals = members.map((member, i) => `const m${i} = zod[${JSON.stringify(member)}];`).join('\n');
  const named = members.map((member, i) => `m${i} as ${member}`).join(', ');
  const object = members.map((member, i) => `${JSON.stringify(member)}: m${i}`).join(', ');
  return `import * as zod from ${JSON.stringify(ZOD_WITHOUT_LOCALES)};\n${locals}\nexport { ${named} };\nexport const z = { ${object} };\n`;
}
