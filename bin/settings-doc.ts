/**
 * `npm run settings-doc`: prints the settings tables generated from platform/config.ts; `--write` puts them
 * into docs/deploy.md between its settings markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderSettings, withSettings } from '#build/settings-doc';

const doc = path.resolve(import.meta.dirname, '../docs/deploy.md');
const block = renderSettings();
if (process.argv.includes('--write')) {
  writeFileSync(doc, withSettings(readFileSync(doc, 'utf8'), block));
  process.stderr.write('wrote docs/deploy.md settings\n');
} else process.stdout.write(`${block}\n`);
