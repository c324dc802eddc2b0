import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Metafile, Plugin } from 'esbuild';

/**
 * How every Lambda of the platform is bundled (docs/architecture.md §11), in one place: PlatformFunction
 * runs esbuild with `lambdaBuildOptions` in CDK's local bundling, and the bench (bench/bundle.ts) builds
 * with the same function, so the sizes it reports are the sizes that deploy. Plain esbuild options, no
 * CDK import, so the bench loads nothing but esbuild.
 */

/**
 * One result per file and contents for the rewrites of the plugins below, kept for the whole process:
 * every function's build loads the same contract, settings and AI SDK files, and a rewrite with
 * TypeScript's parser costs far more than the lookup (build/bundle-functions.ts builds all functions in
 * one process). Keyed by the contents too, so a file that changed between two builds is read again.
 */
function sameFileSameResult<T>(rewrite: (source: string, fileName: string) => Promise<T>) {
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

/** Lets the bundled SDK and other CommonJS dependencies `require` Node built-ins from the ESM bundle. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Replaces the SDK's default credential chain with environment credentials only
 * (platform/aws/lambda-credentials.ts). A Lambda always receives its role's credentials as
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SSO, INI, process,
 * web-identity and IMDS/container providers of `@aws-sdk/credential-provider-node` can never answer
 * there: they are dead weight. Measured here: 333 KB → 201 KB for a bundle holding only the
 * DynamoDB document client (bench/baseline.ts), about 130 KB off every function. Only the
 * bundles see the alias; the local stack and the tests run the sources with tsx and keep the full
 * chain. The path is absolute, so bundling must run locally (esbuild is a devDependency), not in
 * CDK's Docker fallback, where this path does not exist and the build would stop with an error.
 */
export const CREDENTIALS_SHIM = fileURLToPath(new URL('../platform/aws/lambda-credentials.ts', import.meta.url));
export const REPLACED_CREDENTIAL_PROVIDER = '@aws-sdk/credential-provider-node';

/**
 * zod's `z` is a namespace object (`export { z }` of `import * as z`), so a bundle that uses it, as
 * the AI SDK does (`import { z } from 'zod/v4'`), keeps every export of it, among them the
 * `locales` namespace: all ~50 languages, ~258 KB minified. zod only ever installs `en` itself
 * (classic/schemas.js imports locales/en.js directly), and nothing here calls `z.config(z.locales.xx())`.
 * esbuild's alias rewrites package paths only, not zod's own relative `../locales/index.js`, so the
 * bundles swap the package entry instead: build/zod-lean re-exports zod's API with `locales`
 * (and `core.locales`) holding `en` alone. Measured: ai 1591 KB → 1336 KB, gateway 1675 KB → 1419 KB.
 * An alias of `zod` also captures its subpaths, hence its own entry for `zod/v3` (below). Like the
 * credentials shim, bundles only; tests run the real zod.
 */
export const ZOD_WITHOUT_LOCALES = fileURLToPath(new URL('./zod-lean/index.ts', import.meta.url));
/** The `zod` alias would also capture `zod/mini` (and fail to resolve it as `build/zod-lean/index.ts/mini`): its own entry. */
export const ZOD_MINI = fileURLToPath(new URL('./zod-lean/mini.ts', import.meta.url));

/**
 * Two more swaps for the functions that call models (ai, gateway, agent chat): `zod/v3`, of which the
 * AI SDK uses one enum (build/stubs/zod-v3-kinds.ts, ~57 KB off), and `@ai-sdk/gateway`, the
 * default provider for bare string model ids, which this platform never passes (build/stubs/
 * ai-gateway.ts, ~63 KB off). Bundles only, like the zod alias: tests run the real packages.
 */
export const ZOD_V3 = fileURLToPath(new URL('./stubs/zod-v3-kinds.ts', import.meta.url));
export const AI_DEFAULT_PROVIDER = fileURLToPath(new URL('./stubs/ai-gateway.ts', import.meta.url));

/**
 * The AI SDK's own copy of zod. The AI SDK (loaded by `import()`, domain/ai/sdk/*) uses zod classic
 * (`zod`, `zod/v4`), the platform zod/mini; both are built on the same zod/v4/core/*.js files. esbuild
 * splits by file, so a core file reached at init through zod/mini lands in the init chunk with every
 * part of it the lazy AI SDK uses too: ~148 KB of zod at the cold start of ai, gateway and
 * runtime-model, against ~40 KB elsewhere. Resolving the AI SDK's zod imports into a namespace of
 * their own makes esbuild treat those files as other modules: the classic copy, core included, moves
 * into the lazy chunks with the SDK. Measured: ai init 497 KB → 385 KB, package +29 KB.
 * Two copies are safe here because zod keeps its one registry on `globalThis.__zod_globalRegistry`
 * (descriptions and metadata set through either copy are seen by both) and `toJSONSchema` reads a
 * schema's `_zod` internals, not its class: a zod/mini tool schema of the platform converts to the
 * same JSON Schema (test/infra/bundles.test.ts sends one to a fake provider from a real bundle).
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

/**
 * The AI SDK imports zod as `import { z as z2 } from "zod/v4"`, and `z` is zod's whole API as one
 * namespace object, which esbuild cannot tree-shake: every AI function shipped all of zod classic
 * (`z.compile`, `z.fromJSONSchema`, the ISO and codec helpers...) in its lazy chunks. An importer
 * that only ever reads members of its zod bindings (`z2.object`, `z4.toJSONSchema`) gets instead a
 * module with just those members, taken from the same copy of zod, so the rest falls away. A name used
 * any other way (passed as a value, re-exported) or any other import form keeps the real module.
 */
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

/**
 * The AWS SDK's subpath barrels (`@smithy/core/protocols`, `@aws-sdk/core/protocols`...), cut per importer.
 * esbuild splits by file and counts a file as reached from every entry whose static import graph
 * leads to it, tree shaking aside: the DynamoDB client reaches the protocols barrel at init, the
 * barrel imports every protocol, so the REST-JSON (SES) and XML (S3) protocol code a lazy client
 * uses landed in the init chunk (~13 KB in accounts, ~28 KB in provisioner and skills). Each import
 * of such a barrel instead gets a barrel re-exporting only the names that importer takes, straight
 * from the files that define them: the same bindings from the same files (one instance of each, so
 * classes stay the same), no other import edge. The serde barrel, which the DynamoDB client reaches
 * for one helper, also defines names of its own and re-exports the stream code S3 uses (~10 KB at
 * the skills function's init): its own statements become one module of their own, which the cut
 * re-exports for the names it defines (retry takes its `v4`). An importer taking more than names
 * (`import *`, `export *`) keeps the real barrel. The packages declare `sideEffects: false`, so
 * evaluating fewer barrel lines changes nothing else.
 */
export const SDK_BARREL_NAMESPACE = 'sdk-barrel-cut';
const SDK_BARREL = /^@(aws-sdk|smithy)\/core\/[a-zA-Z-]+$/;

export const SDK_BARREL_OWN_NAMESPACE = 'sdk-barrel-own';

export const sdkBarrelsPerImporter: Plugin = {
  name: 'sdk-barrels-per-importer',
  setup(esbuild) {
    const cutBarrels = new Map<string, string>();
    const sourceOf = (file: string, namespace: string) =>
      namespace === SDK_BARREL_NAMESPACE ? cutBarrels.get(file) : namespace === 'file' ? readFileSync(file, 'utf8') : undefined;
    esbuild.onResolve({ filter: SDK_BARREL }, async (args) => {
      if (args.pluginData === SDK_BARREL_NAMESPACE) return undefined;
      const importerSource = sourceOf(args.importer, args.namespace);
      const names = importerSource === undefined ? undefined : namesTakenFrom(importerSource, args.path);
      if (!names) return undefined;
      const barrel = await esbuild.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: SDK_BARREL_NAMESPACE,
      });
      if (barrel.errors.length || barrel.namespace !== 'file') return undefined;
      const cut = cutBarrel(readFileSync(barrel.path, 'utf8'), names, `${SDK_BARREL_OWN_NAMESPACE}:${barrel.path}`);
      if (cut === undefined) return undefined;
      // One module per barrel and set of names.
      const key = `${barrel.path}?${[...names].sort().join(',')}`;
      cutBarrels.set(key, cut);
      return { path: key, namespace: SDK_BARREL_NAMESPACE, sideEffects: false };
    });
    esbuild.onLoad({ filter: /.*/, namespace: SDK_BARREL_NAMESPACE }, (args) => ({
      contents: cutBarrels.get(args.path)!,
      loader: 'js',
      resolveDir: path.dirname(args.path.slice(0, args.path.indexOf('?'))),
    }));
    esbuild.onResolve({ filter: new RegExp(`^${SDK_BARREL_OWN_NAMESPACE}:`) }, (args) => ({
      path: args.path.slice(SDK_BARREL_OWN_NAMESPACE.length + 1),
      namespace: SDK_BARREL_OWN_NAMESPACE,
      sideEffects: false,
    }));
    esbuild.onLoad({ filter: /.*/, namespace: SDK_BARREL_OWN_NAMESPACE }, (args) => ({
      contents: barrelOwnStatements(readFileSync(args.path, 'utf8')),
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The names `source` imports or re-exports from `specifier`; undefined when it takes more (`import *`, `export *`, a default or bare import). */
export function namesTakenFrom(source: string, specifier: string): Set<string> | undefined {
  const quoted = `["']${escapeRegExp(specifier)}["']`;
  if (new RegExp(`import\\s*${quoted}|(import\\s*\\*|export\\s*\\*|import\\s+[\\w$]+\\s*(,|from))[^;]*?${quoted}`).test(source)) return undefined;
  const names = new Set<string>();
  for (const m of source.matchAll(new RegExp(`(?:import|export)\\s*\\{([^}]*)\\}\\s*from\\s*${quoted}`, 'g')))
    for (const part of m[1]!.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!
        .trim();
      if (name) names.add(name);
    }
  return names;
}

const REEXPORT_FROM = /export\s*\{([^}]*)\}\s*from\s*(["'][^"']+["']);?/g;

/**
 * `barrel` cut to `names`: each re-exported straight from the file that defines it (`export { … }
 * from` lines, and `import { … } from` + `export { … }` pairs), and each name the barrel defines
 * itself (the serde barrel's `v4`, its blob adapter class) from `ownSpecifier`, the module of the
 * barrel's own statements (`barrelOwnStatements`; one module for every importer, so a class stays
 * one class). Undefined when a name comes from nowhere the cut can see, or the barrel has an `export *`.
 */
export function cutBarrel(barrel: string, names: Set<string>, ownSpecifier?: string): string | undefined {
  if (/export\s*\*/.test(barrel)) return undefined;
  const specifiers = (list: string) =>
    list
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const [imported, local = imported] = p.split(/\s+as\s+/).map((x) => x.trim()) as [string, string?];
        return { imported, local };
      });
  /** Exported name -> the file and the name it has there. */
  const source = new Map<string, { from: string; name: string }>();
  const imported = new Map<string, { from: string; name: string }>();
  for (const m of barrel.matchAll(/import\s*\{([^}]*)\}\s*from\s*(["'][^"']+["'])/g))
    for (const { imported: name, local } of specifiers(m[1]!)) imported.set(local, { from: m[2]!, name });
  for (const m of barrel.matchAll(/export\s*\{([^}]*)\}\s*(from\s*(["'][^"']+["']))?/g))
    for (const { imported: name, local: exported } of specifiers(m[1]!)) {
      const origin = m[3] ? { from: m[3], name } : imported.get(name);
      if (origin) source.set(exported, origin);
    }
  const definedHere = (name: string) => new RegExp(`export\\s+(const|let|var|class|function\\*?)\\s+${escapeRegExp(name)}\\b`).test(barrel);
  const kept: string[] = [];
  for (const name of names) {
    const origin = source.get(name) ?? (ownSpecifier && definedHere(name) ? { from: JSON.stringify(ownSpecifier), name } : undefined);
    if (!origin) return undefined;
    kept.push(`export { ${origin.name === name ? name : `${origin.name} as ${name}`} } from ${origin.from};`);
  }
  return kept.join('\n');
}

/** The barrel without its `export { … } from` lines: what it defines itself, and the imports that needs. */
export const barrelOwnStatements = (barrel: string) => barrel.replace(REEXPORT_FROM, '');

/**
 * The esbuild settings of every function's code (the agent runtime's image reuses them too, as one
 * file); `lambdaBuildOptions` adds how a function's output is laid out.
 */
export const LAMBDA_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  // Prefer the ESM builds of dependencies: they tree-shake, the CommonJS ones do not.
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  // An external source map: stack traces need only the mappings, the sources would double the asset.
  sourcemap: true,
  sourcesContent: false,
  // The AWS SDK is bundled, not taken from the runtime: pinned versions, and only what is used.
  external: [],
  alias: {
    [REPLACED_CREDENTIAL_PROVIDER]: CREDENTIALS_SHIM,
    zod: ZOD_WITHOUT_LOCALES,
    'zod/v4': ZOD_WITHOUT_LOCALES,
    'zod/mini': ZOD_MINI,
    'zod/v3': ZOD_V3,
    '@ai-sdk/gateway': AI_DEFAULT_PROVIDER,
  },
  plugins: [aiSdkZodCopy, sdkBarrelsPerImporter],
} satisfies BuildOptions;

/**
 * A function deploys as `index.mjs` (so Lambda's handler stays `index.<export>`) plus `chunks/`. With
 * code splitting, every `import()` in the function's graph becomes a chunk that Node parses and runs
 * only when that import first runs: a library only some routes need (KMS, SES, Stripe, the AI SDK...)
 * costs nothing at a cold start of the others. Modules two chunks share land in a chunk of their own,
 * imported statically by both. The banner is written at the top of every chunk, so a chunk that
 * `require`s a Node built-in has its own `require`; each chunk gets its own source map.
 */
export const SPLIT_OUTPUT = {
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
} satisfies BuildOptions;

/** The entry's name in the output folder: `index.mjs`. */
export const LAMBDA_ENTRY_NAME = 'index';

/**
 * One init chunk instead of dozens. esbuild puts a file in a chunk per set of entries (the function
 * and each `import()` target) whose static graph reaches it, so every lazy module sharing another
 * subset of the init code (the skills function's ~30 skills, each with its own mix of db modules)
 * cut the init into its own set of chunks: 43 files loaded at the skills function's cold start, each
 * a module load (resolve, read, link), ~1.4x the baseline against ~1.05x for the same code in 2 files.
 * Each `import()` of a project file here resolves to a module that imports the function's entry first
 * and re-exports the target, so every lazy entry reaches all of the init code, which therefore
 * lands in one chunk. At run time nothing changes: a lazy chunk loads after the entry has run, so its
 * extra static import is of modules already evaluated; what only lazy modules use stays lazy.
 */
export const LAZY_ENTRY_NAMESPACE = 'lazy-entry';
const NODE_MODULES = /[\\/]node_modules[\\/]/;

export const lazyEntriesShareTheInit = (entry: string): Plugin => ({
  name: 'lazy-entries-share-the-init',
  setup(esbuild) {
    const entryFile = path.resolve(esbuild.initialOptions.absWorkingDir ?? process.cwd(), entry);
    esbuild.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === LAZY_ENTRY_NAMESPACE || NODE_MODULES.test(args.importer)) return undefined;
      const target = await esbuild.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: LAZY_ENTRY_NAMESPACE,
      });
      // Project TypeScript only: the platform's lazy modules (a CommonJS file's exports are left as esbuild maps them).
      if (target.errors.length || target.namespace !== 'file' || target.external || !/\.m?ts$/.test(target.path) || NODE_MODULES.test(target.path))
        return undefined;
      return { path: target.path, namespace: LAZY_ENTRY_NAMESPACE };
    });
    esbuild.onLoad({ filter: /.*/, namespace: LAZY_ENTRY_NAMESPACE }, (args) => {
      const target = JSON.stringify(args.path);
      const withDefault = /\bexport\s+default\b/.test(readFileSync(args.path, 'utf8')) ? `export { default } from ${target};\n` : '';
      return { contents: `import ${JSON.stringify(entryFile)};\nexport * from ${target};\n${withDefault}`, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
});

/**
 * The contract's documentation stays out of the functions that do not serve it. A route's `summary`,
 * `description` and `responses` (and a group's `description`) are read by the OpenAPI document
 * only (contract/openapi.ts), yet every function carried them: the prose and the response
 * schemas' factories of its group were 3–9 KB of each init. Each contract file is loaded with
 * those properties removed from its route and group objects (objects with an `operation`, or a
 * `group` and `routes`), and every `lazySchema(…)` call marked pure, so the response schemas and
 * what only they referenced are tree-shaken. The function whose handler
 * loads the document builder (`contract/document`: api-document) keeps them all; the local
 * stack and the tests run the sources, with everything.
 */
const CONTRACT_DIR = fileURLToPath(new URL('../contract/', import.meta.url));
const CONTRACT_FILE = new RegExp(`^${CONTRACT_DIR.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.+\\.ts$`);
const DOC_PROPERTIES = new Set(['summary', 'description', 'responses']);
const DOCUMENT_BUILDER = path.join(CONTRACT_DIR, 'document');
const isDocumentBuilder = (resolveDir: string, specifier: string) =>
  specifier === '#contract/document' || path.resolve(resolveDir, specifier) === DOCUMENT_BUILDER;

const contractWithoutItsDocs = sameFileSameResult(withoutContractDocs);

export const contractWithoutDocs = (entry: string): Plugin => ({
  name: 'contract-without-docs',
  setup(esbuild) {
    const entryFile = path.resolve(esbuild.initialOptions.absWorkingDir ?? process.cwd(), entry);
    if (/contract\/document['"]/.test(readFileSync(entryFile, 'utf8'))) return;
    esbuild.onLoad({ filter: CONTRACT_FILE }, async (args) => ({
      contents: await contractWithoutItsDocs(args.path),
      loader: 'ts',
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

/**
 * What only the stack reads of the settings stays out of the functions. Every setting of platform/config.ts is declared
 * as data: its schema and default, which the function parses, and its description, whether it is a secret, set by the
 * stack or local only, which lib/settings.ts (CDK) reads and no function does, yet each function would carry them for
 * every section it reads. platform/config.ts is loaded with those removed from each setting (an object with a `schema`);
 * the local stack and the tests run the sources, with everything.
 */
const CONFIG_FILE = fileURLToPath(new URL('../platform/config.ts', import.meta.url));
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

/**
 * esbuild writes a chunk for every `import()` in the graph, also for one whose call tree shaking
 * removed (viem's index reaches `import('isows')` of its unused websocket transport: `ws`, 49 KB;
 * the skills function's unused `launcher()` reaches the ECS client). Nothing imports such a chunk,
 * so its code can never run, but it was deployed and counted against the 1 MB package limit
 * (gateway 88 KB, skills 263 KB). After the build, every output the entry cannot reach statically
 * or through `import()` is deleted (from disk, or from `outputFiles` when nothing is written) and
 * from the metafile, which this plugin asks esbuild for.
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

/** The complete esbuild options of one function: its handler file bundled into `outdir`. */
export function lambdaBuildOptions(entry: string, outdir: string) {
  return {
    ...LAMBDA_BUNDLE,
    ...SPLIT_OUTPUT,
    plugins: [...LAMBDA_BUNDLE.plugins, lazyEntriesShareTheInit(entry), contractWithoutDocs(entry), settingsForTheFunctions, dropUnreachableChunks(outdir)],
    entryPoints: { [LAMBDA_ENTRY_NAME]: entry },
    outdir,
  } satisfies BuildOptions;
}

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
