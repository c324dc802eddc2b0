import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLE } from '../../lib/bundling';
import { contract } from '../../shared/contract';
import { call } from '../helpers/api';

/**
 * What every function loads at init stays small (issue 16). Session tokens: jose is loaded by the
 * first token signed or verified, not at the cold start. GET /api/openapi.json is generated from every contract group: its function's cold start carries
 * only its own group, and the generator with the other groups' schemas is a lazy chunk loaded by the
 * first request, whose serialized text later requests reuse (issue 16).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OTHER_GROUP_CONTRACTS = new Set(contract.filter((g) => g.group !== 'api-document').map((g) => `shared/contract/${g.group}.ts`));

let outputs: Metafile['outputs'];

const FOLDERS = ['api-document', 'platform', 'keys'];

/** The inputs a function parses at init: its entry and the chunks it imports statically. */
function initInputs(folder: string): string[] {
  const entry = Object.keys(outputs).find((k) => outputs[k]!.entryPoint === `functions/${folder}/handler.ts`)!;
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of outputs[file]!.imports) if (outputs[i.path] && i.kind === 'import-statement') stack.push(i.path);
  }
  return [...seen].flatMap((f) => Object.entries(outputs[f]!.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([name]) => name));
}

beforeAll(async () => {
  const result = await build({
    ...LAMBDA_BUNDLE,
    sourcemap: false,
    splitting: true,
    write: false,
    entryPoints: Object.fromEntries(FOLDERS.map((f) => [f, path.join(ROOT, 'functions', f, 'handler.ts')])),
    outdir: path.join(ROOT, '.lazy-core-build'),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    absWorkingDir: ROOT,
    metafile: true,
    logLevel: 'silent',
  });
  outputs = result.metafile.outputs;
}, 60_000);

describe('session tokens', () => {
  it('load jose on first use, not at init', () => {
    for (const folder of FOLDERS) {
      const atInit = initInputs(folder);
      expect(atInit, folder).toContain('shared/auth/jwt.ts');
      expect(atInit.filter((i) => /node_modules\/jose\//.test(i)), folder).toEqual([]);
    }
    expect(Object.values(outputs).flatMap((o) => Object.keys(o.inputs))).toContain('shared/auth/jose-jwt.ts');
  });
});

describe('the OpenAPI document function', () => {
  it('loads the document generator and the other groups only on its first request', () => {
    const atInit = initInputs('api-document');
    expect(atInit).toContain('functions/api-document/handler.ts');
    expect(atInit.filter((i) => i === 'shared/contract/document.ts' || i === 'shared/contract/openapi.ts' || OTHER_GROUP_CONTRACTS.has(i))).toEqual([]);
    expect(OTHER_GROUP_CONTRACTS.size).toBeGreaterThan(20);
    const lazy = Object.values(outputs).flatMap((o) => Object.keys(o.inputs));
    expect(lazy).toContain('shared/contract/document.ts');
  });

  it('serves the same JSON document on every request', async () => {
    const first = await call('GET', '/api/openapi.json');
    const second = await call('GET', '/api/openapi.json');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.body.openapi).toBe('3.1.0');
    expect(Object.keys(first.body.paths)).toContain('/api/openapi.json');
    expect(Object.keys(first.body.paths).length).toBeGreaterThan(50);
    expect(second.text).toBe(first.text);
  });
});
