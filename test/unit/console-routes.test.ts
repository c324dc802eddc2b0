import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ROUTES, isConsoleRoute } from '#contract/console';
import { consoleRequestFunctionCode } from '#lib/constructs/web-console';

/**
 * Only the console's own routes get its page. The list in contract/console.ts is the console's router
 * table (web/ may import nothing of the product, so the two are kept equal here), and the CloudFront
 * function built from it is run as CloudFront runs it: a viewer request in, a request or a response out.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

const API_PATHS = [
  '/v1/models',
  '/v1/unknown',
  '/v1',
  '/mcp',
  '/mcp/messages',
  '/sse',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-authorization-server',
  '/api/nothing-here',
];

describe('the console routes', () => {
  it('are the routes of the console’s router, no more, no fewer', () => {
    const source = readFileSync(path.join(ROOT, 'web/src/main.tsx'), 'utf8');
    const table = /const ROUTES: Route\[\] = \[([\s\S]*?)\n\];/.exec(source)![1]!;
    const paths = [...table.matchAll(/\{ path: '([^']+)'/g)].map((m) => m[1]);
    expect([...CONSOLE_ROUTES].sort()).toEqual(paths.sort());
  });

  it('match as the console’s router matches: a segment per parameter, an optional trailing slash, nothing below', () => {
    for (const p of ['/', '/sign-in', '/agents/agt_1', '/agents/agt_1/', '/settings/billing', '/gateway/receipt']) expect(isConsoleRoute(p), p).toBe(true);
    for (const p of ['/agents', '/agents/a/b', '/sign-inx', '/index.html', '/favicon.ico', '/nowhere', ...API_PATHS]) expect(isConsoleRoute(p), p).toBe(false);
  });
});

describe('the CloudFront viewer-request function of the console files', () => {
  const handler = (() => {
    const context = vm.createContext({});
    vm.runInContext(`${consoleRequestFunctionCode()}\nthis.handler = handler;`, context);
    return context.handler as (event: unknown) => {
      uri?: string;
      statusCode?: number;
      headers?: Record<string, { value: string }>;
      body?: { encoding: string; data: string };
    };
  })();
  const request = (uri: string) =>
    handler({ version: '1.0', context: { eventType: 'viewer-request' }, request: { method: 'GET', uri, headers: {}, querystring: {}, cookies: {} } });

  it('rewrites the console’s routes to index.html and lets hashed assets through', () => {
    expect(request('/agents/agt_1')).toMatchObject({ uri: '/index.html' });
    expect(request('/')).toMatchObject({ uri: '/index.html' });
    expect(request('/settings/billing')).toMatchObject({ uri: '/index.html' });
    expect(request('/assets/console-ABC123.js')).toMatchObject({ uri: '/assets/console-ABC123.js' });
  });

  it('answers 404 JSON for every other path, the API’s prefixes included, never the console’s page', () => {
    for (const uri of ['/nowhere', '/index.htm', ...API_PATHS]) {
      const answer = request(uri);
      expect(answer.statusCode, uri).toBe(404);
      expect(answer.headers!['content-type']!.value).toContain('application/json');
      expect(JSON.parse(answer.body!.data)).toEqual({ error: 'not found', code: 'NOT_FOUND' });
    }
  });
});
