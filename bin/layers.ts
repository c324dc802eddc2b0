/**
 * `npm run layers`: the folder-to-folder import graph, the cycles and every import against
 * layers.json; exits 1 when there is one. `--write` also regenerates docs/architecture.md section 2.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkLayers, folderGraph, readLayers, renderLayout, withLayout } from '#build/layers';

const root = path.resolve(import.meta.dirname, '..');
const layers = readLayers(root);
const { violations, cycles, imports } = checkLayers(root, layers);
for (const [from, to] of folderGraph(imports)) process.stdout.write(`${from} -> ${to.join(', ')}\n`);
for (const c of cycles) process.stdout.write(`cycle: ${c.join(' <-> ')}\n`);
for (const v of violations) process.stdout.write(`${v.from}: '${v.specifier}': ${v.rule}\n`);
process.stdout.write(`${imports.length} imports, ${cycles.length} cycles, ${violations.length} against layers.json\n`);
if (process.argv.includes('--write')) {
  const doc = path.join(root, 'docs/architecture.md');
  writeFileSync(doc, withLayout(readFileSync(doc, 'utf8'), renderLayout(layers)));
  process.stderr.write('wrote docs/architecture.md section 2\n');
}
process.exit(violations.length || cycles.length ? 1 : 0);
