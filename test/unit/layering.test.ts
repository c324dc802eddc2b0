import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) return sourcesUnder(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

const importsOf = (file: string) => [...readFileSync(path.join(root, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);

describe('errors and imports point one way (docs/architecture.md §2)', () => {
  it('the data layer and the adapters import nothing from http', () => {
    const offenders = [...sourcesUnder('data'), ...sourcesUnder('adapters')].filter((file) =>
      importsOf(file).some((spec) => path.resolve(path.dirname(path.join(root, file)), spec).startsWith(path.join(root, 'http'))),
    );
    expect(offenders).toEqual([]);
  });

  it('nothing below the pipeline throws HttpError: domain code throws DomainError and http maps it', () => {
    const below = ['platform', 'adapters', 'data', 'domain'].flatMap(sourcesUnder);
    expect(below.length).toBeGreaterThan(50);
    const offenders = below.filter((file) => /\bHttpError\b/.test(readFileSync(path.join(root, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
