import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';

/**
 * sdk-barrels-per-importer: the AWS SDK's subpath barrels (`@smithy/core/protocols`,
 * `@aws-sdk/core/protocols`, `serde`...), cut per importer.
 *
 * Why: esbuild splits by file and counts a file as reached from every entry whose static import graph
 * leads to it, tree shaking aside: the DynamoDB client reaches the protocols barrel at init, the
 * barrel imports every protocol, so the REST-JSON (SES) and XML (S3) protocol code a lazy client uses
 * landed in the init chunk. Each import of such a barrel instead gets a barrel re-exporting only the
 * names that importer takes, straight from the files that define them: the same bindings from the
 * same files (one instance of each, so classes stay the same), no other import edge. The serde
 * barrel, which the DynamoDB client reaches for one helper, also defines names of its own and
 * re-exports the stream code S3 uses: its own statements become one module of their own, which the
 * cut re-exports for the names it defines (retry takes its `v4`). An importer taking more than names
 * (`import *`, `export *`) keeps the real barrel. The packages declare `sideEffects: false`, so
 * evaluating fewer barrel lines changes nothing else.
 *
 * What it saves: the lazy clients' protocol and stream code at the cold start of accounts, settings,
 * provisioner and skills (init sizes in bench/results.json; docs/architecture.md §11).
 *
 * What would break it: it reads the barrels with regular expressions, so an `@aws-sdk/core` or
 * `@smithy/core` upgrade that writes them otherwise (`export *`, a bundled barrel, another export
 * syntax) makes the cut give up and keep the real barrel (bigger, not wrong); one that drops
 * `sideEffects: false` would make the cut skip side effects (test/unit/build-sdk-barrels-per-importer.test.ts
 * and the S3/SES request test of test/infra/bundles.test.ts).
 */
export const SDK_BARREL_NAMESPACE = 'sdk-barrel-cut';
const SDK_BARREL = /^@(aws-sdk|smithy)\/core\/[a-zA-Z-]+$/;

export const SDK_BARREL_OWN_NAMESPACE = 'sdk-barrel-own';

export const sdkBarrelsPerImporter: Plugin = {
  name: 'sdk-barrels-per-importer',
  setup(esbuild) {
    const cutBarrels = new Map<string, string>();
    esbuild.onResolve({ filter: SDK_BARREL }, async (args) => {
      if (args.pluginData === SDK_BARREL_NAMESPACE) return undefined;
      const names =
        args.namespace === SDK_BARREL_NAMESPACE
          ? namesTakenFrom(cutBarrels.get(args.importer)!, args.path)
          : args.namespace === 'file'
            ? sameFileSameNames(args.importer, args.path)
            : undefined;
      if (!names) return undefined;
      const barrel = await esbuild.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: SDK_BARREL_NAMESPACE,
      });
      if (barrel.errors.length || barrel.namespace !== 'file') return undefined;
      const cut = sameBarrelSameCut(barrel.path, names);
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

/**
 * The rewrites below for the whole process: every function's build reads the same SDK files, and reading
 * and scanning them again for each build costs more than the look-up. A file is read again when its size
 * or modification time changed since.
 */
const stampOf = (file: string) => {
  const { size, mtimeMs } = statSync(file);
  return `${size}:${mtimeMs}`;
};
const namesByImport = new Map<string, { stamp: string; names: Set<string> | undefined }>();
function sameFileSameNames(importer: string, specifier: string): Set<string> | undefined {
  const key = `${importer}\0${specifier}`;
  const stamp = stampOf(importer);
  const known = namesByImport.get(key);
  if (known?.stamp === stamp) return known.names;
  const names = namesTakenFrom(readFileSync(importer, 'utf8'), specifier);
  namesByImport.set(key, { stamp, names });
  return names;
}
const cutsByBarrel = new Map<string, { stamp: string; cut: string | undefined }>();
function sameBarrelSameCut(barrel: string, names: Set<string>): string | undefined {
  const key = `${barrel}?${[...names].join(',')}`;
  const stamp = stampOf(barrel);
  const known = cutsByBarrel.get(key);
  if (known?.stamp === stamp) return known.cut;
  const cut = cutBarrel(readFileSync(barrel, 'utf8'), names, `${SDK_BARREL_OWN_NAMESPACE}:${barrel}`);
  cutsByBarrel.set(key, { stamp, cut });
  return cut;
}

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
