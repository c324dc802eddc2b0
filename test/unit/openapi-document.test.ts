import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateClientTypes } from '#build/client-types';
import { allRoutes } from '#contract';
import { openApiDocument } from '#contract/document';

const run = promisify(execFile);
const doc = openApiDocument({ version: 'test', serverUrl: 'https://api.example.test' }) as {
  servers: { url: string }[];
  components: { schemas: Record<string, unknown> };
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }>; operationId: string }>>;
};
const workDir = mkdtempSync(join(tmpdir(), 'openapi-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Resolves a local JSON pointer (`#/components/schemas/Agent`) against the document. */
function resolvePointer(root: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part.replaceAll('~1', '/').replaceAll('~0', '~')))
    .reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), root);
}

function collectRefs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else collectRefs(value, found);
    }
  }
  return found;
}

const operations = () => Object.values(doc.paths).flatMap((item) => Object.entries(item).map(([method, op]) => ({ method, op })));

describe('the OpenAPI document', () => {
  it('passes Redocly recommended lint with 0 errors', async () => {
    const file = join(workDir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const result = await run(join('node_modules', '.bin', 'redocly'), ['lint', file, '--format=json', '--config', 'redocly.yaml'], {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout: string }) => err);
    const report = JSON.parse(result.stdout) as { totals: { errors: number }; problems: { ruleId: string; severity: string }[] };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it('resolves every $ref inside the document, recursive JSON values included', () => {
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(100);
    const unresolved = [...new Set(refs)].filter((ref) => !ref.startsWith('#/') || resolvePointer(doc, ref) === undefined);
    expect(unresolved).toEqual([]);
    expect(doc.components.schemas.JsonValue).toBeDefined();
  });

  it('names the resources as components', () => {
    for (const name of ['Agent', 'AgentSummary', 'Instance', 'ApiKey', 'Skill', 'Model', 'Wallet', 'Error', 'ValidationError', 'User']) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it('names the server it was built for', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'https://api.example.test' })]);
  });

  it('documents 413 on every body, Retry-After on every rate-limited route and Location on every redirect', () => {
    for (const route of allRoutes) {
      const op = doc.paths[route.path]![route.method.toLowerCase()]!;
      if (route.body || route.bodyHandling?.kind === 'raw') expect(op.responses, `${route.operation} 413`).toHaveProperty('413');
      if (route.rateLimit) expect(op.responses['429']?.headers, `${route.operation} 429`).toHaveProperty('Retry-After');
      for (const status of ['301', '302', '303']) {
        if (op.responses[status]) expect(op.responses[status]!.headers, `${route.operation} ${status}`).toHaveProperty('Location');
      }
      if (route.setsCookies) expect(JSON.stringify(op.responses), route.operation).toContain('Set-Cookie');
    }
    expect(operations().length).toBe(allRoutes.length);
  });
});

describe('the typed client (clients/typescript)', () => {
  it('is generated from the current document: run `npm run client` after changing the contract', async () => {
    const checkedIn = readFileSync(new URL('../../clients/typescript/schema.d.ts', import.meta.url), 'utf8');
    expect(checkedIn === (await generateClientTypes()), 'clients/typescript/schema.d.ts is out of date').toBe(true);
  }, 60_000);
});
