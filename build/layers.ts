/**
 * The layout check: reads layers.json (each top-level folder, what it holds and which folders it may
 * import), reads every import of the repository's TypeScript, and lists what breaks the rules. The
 * boundary test and `npm run layers` both call it, and docs/architecture.md section 2 is rendered
 * from the same file, so the rule, the proof and the docs cannot drift apart.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { withDocBlock } from './doc-blocks';

export interface FolderRule {
  path: string;
  holds: string;
  /** Folders this one's files may import, or `*` for any. */
  mayImport: string[] | '*';
  /** When set, the only packages its files may import (a name also admits its subpaths). */
  packages?: string[];
  /** Files only the folder itself (and the folders free to import anything) may import. */
  internal?: string[];
  /** Folders that may import its internal files all the same (the local stack and CDK build the table). */
  internalOpenTo?: string[];
  /** Its subfolders import each other in one direction only. */
  acyclicSubfolders?: boolean;
  /** Folders whose subfolders never import each other. */
  isolatedSubfolders?: string[];
  /** Its imports draw no edge of the folder graph (the tests import anything, and the bench reuses their helpers). */
  outsideTheGraph?: boolean;
}

export interface Layers {
  folders: FolderRule[];
  /** Packages only these folders may import. */
  exclusivePackages: Record<string, string[]>;
}

export interface Import {
  from: string;
  specifier: string;
  /** The repository file it names, when it names one. */
  to?: string;
}

export interface Violation {
  from: string;
  specifier: string;
  rule: string;
}

const SKIPPED = /(^|\/)(node_modules|cdk\.out|dist|\.data[^/]*|\.git|coverage)(\/|$)|\.d\.ts$/;
const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]|(?:import|vi\.mock|vi\.doMock|vi\.importActual)\(\s*['"]([^'"]+)['"]/g;

export function readLayers(root: string): Layers {
  return JSON.parse(readFileSync(path.join(root, 'layers.json'), 'utf8')) as Layers;
}

/** Every TypeScript source file under `dir` of `root` (dependencies, build outputs and local data aside), relative to `root`. */
export function sourcesOf(root: string, dir = ''): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = dir ? `${dir}/${name}` : name;
    if (SKIPPED.test(rel)) return [];
    if (statSync(path.join(root, rel)).isDirectory()) return sourcesOf(root, rel);
    return SOURCE.test(name) ? [rel] : [];
  });
}

/** Every import of every TypeScript file under the given folders, resolved to the file it names. */
export function importsOf(root: string, folders: readonly string[]): Import[] {
  const files = folders.flatMap((f) => sourcesOf(root, f));
  const known = new Set(files);
  const aliases = Object.entries((JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).imports ?? {}) as Record<string, string>);
  const existing = (target: string) =>
    target.startsWith('node_modules/')
      ? undefined
      : [target, `${target}.ts`, `${target}.tsx`, `${target}.mjs`, `${target}.d.ts`, `${target}/index.ts`].find((c) => known.has(c) || statOk(root, c));
  const resolve = (from: string, specifier: string): string | undefined => {
    if (specifier.startsWith('.')) return existing(path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)));
    if (!specifier.startsWith('#')) return undefined;
    for (const [key, target] of aliases) {
      const star = key.indexOf('*');
      if (star < 0 ? key === specifier : specifier.startsWith(key.slice(0, star))) {
        return existing(target.replace('*', specifier.slice(star)).replace(/^\.\//, ''));
      }
    }
    return undefined;
  };
  return files.flatMap((from) =>
    [...readFileSync(path.join(root, from), 'utf8').matchAll(IMPORT)].map((m) => {
      const specifier = (m[1] ?? m[2])!;
      return { from, specifier, to: resolve(from, specifier) };
    }),
  );
}

function statOk(root: string, rel: string): boolean {
  try {
    return statSync(path.join(root, rel)).isFile();
  } catch {
    return false;
  }
}

const topOf = (file: string) => file.split('/')[0]!;
const packageOf = (specifier: string) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
const isBuiltin = (specifier: string) => specifier.startsWith('node:');

/** The subfolder of `parent` a file lies in (`domain/ai/x.ts` in `domain` is `domain/ai`), if any. */
const subfolderOf = (file: string, parent: string): string | undefined => {
  if (!file.startsWith(`${parent}/`)) return undefined;
  const rest = file.slice(parent.length + 1).split('/');
  return rest.length > 1 ? `${parent}/${rest[0]}` : undefined;
};

/** Every import against layers.json, and the cycles between top-level folders and between checked subfolders. */
export function checkLayers(root: string, layers = readLayers(root)): { violations: Violation[]; cycles: string[][]; imports: Import[] } {
  const rules = new Map(layers.folders.map((f) => [f.path, f]));
  const imports = importsOf(root, [...rules.keys()]);
  const violations: Violation[] = [];
  const flag = (i: Import, rule: string) => violations.push({ from: i.from, specifier: i.specifier, rule });
  for (const i of imports) {
    const rule = rules.get(topOf(i.from))!;
    const local = i.specifier.startsWith('.') || i.specifier.startsWith('#');
    if (local && !i.to && i.specifier.includes('node_modules/')) continue;
    const pkg = i.to || local ? undefined : packageOf(i.specifier);
    if (pkg && !isBuiltin(i.specifier)) {
      const only = layers.exclusivePackages[pkg];
      if (only && !only.includes(rule.path)) flag(i, `only ${only.join(', ')} may import ${pkg}`);
      if (rule.packages && !rule.packages.includes(pkg)) flag(i, `${rule.path} imports no package but ${rule.packages.join(', ')}`);
      continue;
    }
    if (rule.packages && isBuiltin(i.specifier)) flag(i, `${rule.path} imports no package but ${rule.packages.join(', ')}`);
    if (!i.to) {
      if (local && rule.mayImport !== '*' && !i.specifier.includes('<')) flag(i, 'names no file of the repository');
      continue;
    }
    const target = topOf(i.to);
    if (target !== rule.path && rule.mayImport !== '*' && !rule.mayImport.includes(target)) flag(i, `${rule.path} may not import ${target}`);
    const owner = rules.get(target);
    const open = rule.mayImport === '*' || target === rule.path || owner?.internalOpenTo?.includes(rule.path);
    if (owner?.internal && !open && owner.internal.includes(i.to.slice(target.length + 1))) flag(i, `${i.to} is internal to ${target}`);
    const isolated = rule.isolatedSubfolders ?? [];
    const within = (file: string) => isolated.map((parent) => subfolderOf(file, parent)).find(Boolean);
    const [a, b] = [within(i.from), within(i.to)];
    if (a && b && a !== b) flag(i, `${a} imports another function folder`);
  }
  const edges = new Map<string, Set<string>>();
  const edge = (a: string, b: string) => {
    if (a === b) return;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)!.add(b);
  };
  const checkedSubfolders = layers.folders.filter((f) => f.acyclicSubfolders).map((f) => f.path);
  const outside = new Set(layers.folders.filter((f) => f.outsideTheGraph).map((f) => f.path));
  for (const i of imports) {
    if (!i.to || outside.has(topOf(i.from))) continue;
    edge(topOf(i.from), topOf(i.to));
    for (const parent of checkedSubfolders) {
      const a = subfolderOf(i.from, parent) ?? (i.from.startsWith(`${parent}/`) ? parent : undefined);
      const b = subfolderOf(i.to, parent);
      if (a && b) edge(a, b);
    }
  }
  return { violations, cycles: cyclesOf(edges), imports };
}

/** The strongly connected components of more than one node (Tarjan). */
export function cyclesOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The folder-to-folder import graph as it is: each top-level folder and the folders it imports. */
export function folderGraph(imports: readonly Import[]): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!i.to || topOf(i.from) === topOf(i.to)) continue;
    if (!graph.has(topOf(i.from))) graph.set(topOf(i.from), new Set());
    graph.get(topOf(i.from))!.add(topOf(i.to));
  }
  return new Map([...graph].map(([k, v]) => [k, [...v].sort()]));
}

export const LAYOUT_BEGIN = '<!-- layout -->';
export const LAYOUT_END = '<!-- /layout -->';

/** Section 2's table, as docs/architecture.md holds it between the two markers. */
export function renderLayout(layers: Layers): string {
  const code = (s: string) => `\`${s}/\``;
  const rows = layers.folders.map((f) => {
    const may = f.mayImport === '*' ? 'anything' : f.mayImport.length ? f.mayImport.map(code).join(', ') : 'nothing of the product';
    const extra = [
      f.packages ? `packages: ${f.packages.join(', ')} only` : '',
      f.internal
        ? `${f.internal.map((i) => `\`${i}\``).join(', ')} stay inside${f.internalOpenTo ? ` (but for ${f.internalOpenTo.map(code).join(', ')})` : ''}`
        : '',
      f.acyclicSubfolders ? 'subfolders without cycles' : '',
      f.isolatedSubfolders ? 'no function folder imports another' : '',
    ].filter(Boolean);
    return `| ${code(f.path)} | ${f.holds} | ${may}${extra.length ? `; ${extra.join('; ')}` : ''} |`;
  });
  const exclusive = Object.entries(layers.exclusivePackages).map(([pkg, only]) => `- \`${pkg}\`: only ${only.map(code).join(', ')}.`);
  return [
    LAYOUT_BEGIN,
    '<!-- generated from layers.json by `npm run layers -- --write`: edit layers.json, not this table -->',
    '',
    '| Folder | What it holds | May import |',
    '|---|---|---|',
    ...rows,
    '',
    'Packages kept to some folders:',
    '',
    ...exclusive,
    '',
    LAYOUT_END,
  ].join('\n');
}

/** The document with its layout section replaced by `layout`. */
export const withLayout = (doc: string, layout: string): string =>
  withDocBlock(doc, { begin: LAYOUT_BEGIN, end: LAYOUT_END, doc: 'docs/architecture.md' }, layout);
