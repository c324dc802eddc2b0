import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { checkLayers, type Import } from '#build/layers';

const root = path.resolve(import.meta.dirname, '../..');

/** Where HttpError and its shorthands live: the pipeline's answer type, http's alone. */
const HTTP_ERRORS = 'http/errors.ts';

/** Every place a file names HttpError: imported under any name, or constructed. */
function httpErrorUses(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const uses: string[] = [];
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isImportSpecifier(node) && (node.propertyName ?? node.name).text === 'HttpError') uses.push(`${at(node)} imports HttpError`);
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'HttpError') uses.push(`${at(node)} constructs HttpError`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/** What a set of files does against the rule: an import of http/errors.ts, or HttpError named at all. */
function functionsMappingHttp(imports: readonly Import[], read: (file: string) => string): string[] {
  const files = [...new Set(imports.map((i) => i.from))].filter((f) => f.startsWith('functions/'));
  const viaImport = imports.filter((i) => i.from.startsWith('functions/') && i.to === HTTP_ERRORS).map((i) => `${i.from} imports ${i.specifier}`);
  return [...viaImport, ...files.flatMap((f) => httpErrorUses(f, read(f)))];
}

describe('functions/ throws domain failures and never maps them to HTTP', () => {
  const { imports } = checkLayers(root);
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

  it('no file under functions/ imports #http/errors or names HttpError', () => {
    const functionFiles = new Set(imports.filter((i) => i.from.startsWith('functions/')).map((i) => i.from));
    expect(functionFiles.size).toBeGreaterThan(50);
    expect(functionsMappingHttp(imports, read)).toEqual([]);
  });

  it('catches an import of #http/errors, a renamed HttpError and a construction', () => {
    const planted: Import[] = [
      { from: 'functions/http/x/handler.ts', specifier: '#http/errors', to: HTTP_ERRORS },
      { from: 'functions/http/y/handler.ts', specifier: '#http/pipeline', to: 'http/pipeline.ts' },
    ];
    const sources: Record<string, string> = {
      'functions/http/x/handler.ts': "import { badRequest } from '#http/errors';\nexport const f = () => badRequest('x');\n",
      'functions/http/y/handler.ts': "import { HttpError as Answer } from '#http/pipeline';\nexport const g = () => new HttpError(400, 'x');\n",
    };
    expect(functionsMappingHttp(planted, (f) => sources[f]!)).toEqual([
      'functions/http/x/handler.ts imports #http/errors',
      'functions/http/y/handler.ts:1 imports HttpError',
      'functions/http/y/handler.ts:2 constructs HttpError',
    ]);
  });
});
