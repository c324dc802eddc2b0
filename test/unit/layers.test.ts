import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers, type Layers, readLayers, renderLayout, withLayout } from '#build/layers';

const root = path.resolve(import.meta.dirname, '../..');

describe('every import keeps layers.json', () => {
  const { violations, cycles } = checkLayers(root);

  it('no import against the rules', () => {
    expect(
      violations.map((v) => `${v.from}: ${v.specifier}: ${v.rule}`),
      'imports against layers.json',
    ).toEqual([]);
  });

  it('no cycle between top-level folders or between domain subfolders', () => {
    expect(cycles.map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('docs/architecture.md section 2 is the table layers.json renders', () => {
    const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
    expect(withLayout(doc, renderLayout(readLayers(root))), 'run npm run layers -- --write').toBe(doc);
  });
});

describe('the check itself', () => {
  const tree = mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  const layers: Layers = {
    folders: [
      { path: 'contract', holds: 'data', mayImport: [], packages: ['zod'] },
      { path: 'data', holds: 'tables', mayImport: ['contract'], internal: ['keys.ts'] },
      { path: 'domain', holds: 'rules', mayImport: ['contract', 'data'], acyclicSubfolders: true },
      { path: 'functions', holds: 'lambdas', mayImport: ['contract', 'data', 'domain'], isolatedSubfolders: ['functions/http'] },
      { path: 'test', holds: 'tests', mayImport: '*', outsideTheGraph: true },
    ],
    exclusivePackages: { '@aws-sdk/lib-dynamodb': ['data'] },
  };
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ imports: { '#contract/*': './contract/*.ts', '#data/*': './data/*.ts', '#domain/*': './domain/*.ts' } }),
    'contract/route.ts': "import * as z from 'zod/mini';\nexport const r = z.string();",
    'data/keys.ts': "import { r } from '#contract/route';\nexport const k = r;",
    'data/users.ts': "import { k } from './keys';\nexport const u = k;",
    'domain/a/one.ts': "import { u } from '#data/users';\nexport const one = u;",
    'domain/b/two.ts': "import { one } from '#domain/a/one';\nexport const two = one;",
    'functions/http/x/handler.ts': "import { two } from '#domain/b/two';\nexport const handler = two;",
    'functions/http/y/handler.ts': "import { handler as x } from '../x/handler';\nexport const handler = x;",
    'test/any.ts': "import { handler } from '../functions/http/y/handler';\nimport { k } from '#data/keys';\nexport { handler, k };",
  };
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(tree, rel)), { recursive: true });
    writeFileSync(path.join(tree, rel), text);
  };
  for (const [rel, text] of Object.entries(files)) write(rel, text);
  const rulesOf = () => checkLayers(tree, layers).violations.map((v) => `${v.from} ${v.specifier}: ${v.rule}`);

  it('finds a function folder importing another, and nothing in a tree that keeps the rules', () => {
    expect(rulesOf()).toEqual(['functions/http/y/handler.ts ../x/handler: functions/http/y imports another function folder']);
    write('functions/http/y/handler.ts', "import { two } from '#domain/b/two';\nexport const handler = two;");
    expect(rulesOf()).toEqual([]);
    expect(checkLayers(tree, layers).cycles).toEqual([]);
  });

  it('fails on a forbidden import, an internal file, a package kept elsewhere and a package outside the list', () => {
    write('data/sessions.ts', "import { one } from '#domain/a/one';\nexport const s = one;");
    write('domain/a/keys-user.ts', "import { k } from '#data/keys';\nimport { GetCommand } from '@aws-sdk/lib-dynamodb';\nexport const ku = [k, GetCommand];");
    write('contract/clock.ts', "import { setTimeout } from 'node:timers/promises';\nexport const wait = setTimeout;");
    expect(rulesOf().sort()).toEqual(
      [
        'contract/clock.ts node:timers/promises: contract imports no package but zod',
        'data/sessions.ts #domain/a/one: data may not import domain',
        'domain/a/keys-user.ts #data/keys: data/keys.ts is internal to data',
        'domain/a/keys-user.ts @aws-sdk/lib-dynamodb: only data may import @aws-sdk/lib-dynamodb',
      ].sort(),
    );
  });

  it('finds a cycle between domain subfolders and between top-level folders', () => {
    write('domain/a/back.ts', "import { two } from '#domain/b/two';\nexport const back = two;");
    const cycles = checkLayers(tree, layers).cycles.map((c) => c.join(' <-> '));
    expect(cycles).toContain('domain/a <-> domain/b');
    expect(cycles).toContain('data <-> domain');
  });
});

describe('nothing below the pipeline throws HttpError: domain code throws DomainError and http maps it', () => {
  it('platform, adapters, data and domain never name HttpError', () => {
    const { imports } = checkLayers(root);
    const below = [...new Set(imports.map((i) => i.from))].filter((f) => /^(platform|adapters|data|domain)\//.test(f));
    expect(below.length).toBeGreaterThan(50);
    expect(below.filter((file) => /\bHttpError\b/.test(readFileSync(path.join(root, file), 'utf8')))).toEqual([]);
  });
});
