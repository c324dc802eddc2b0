/** `npm run openapi` writes the OpenAPI 3.1 document (also served at GET /api/openapi.json). */
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '#contract/document';
import { API_VERSION } from '#contract/version';

const out = process.argv[2] ?? 'openapi.json';
const doc = openApiDocument({ version: API_VERSION });
writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
process.stderr.write(`wrote ${out}: ${Object.keys(doc.paths).length} paths\n`);
