/**
 * `npm run client` regenerates the typed client's types (clients/typescript/schema.d.ts) from the
 * OpenAPI document with openapi-typescript; `npm run client -- --check` fails when the checked-in
 * file is out of date (CI runs the same check through test/unit/typed-client.test.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateClientTypes } from '#build/client-types';

const target = fileURLToPath(new URL('../clients/typescript/schema.d.ts', import.meta.url));
const generated = await generateClientTypes();

if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== generated) {
    process.stderr.write('clients/typescript/schema.d.ts is out of date: run `npm run client`\n');
    process.exit(1);
  }
  process.stderr.write('clients/typescript/schema.d.ts is up to date\n');
} else {
  writeFileSync(target, generated);
  process.stderr.write(`wrote clients/typescript/schema.d.ts (${generated.split('\n').length} lines)\n`);
}
