import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '#build/web-console';
import { loadGroupHandler } from '#local/handlers';
import { matchPage } from '#local/pages';
import { createLocalServer } from '#local/server';

/**
 * The local server (`npm start`) over real HTTP: only the console's own routes answer its page; a path
 * no API route serves answers 404 JSON, the API's root prefixes (`/v1/*`, `/mcp*`, `/sse`,
 * `/.well-known/*`) included, so an OpenAI or MCP client probing the platform never gets a 200 of HTML.
 * The API routes under `/v1`, `/mcp` and the OAuth metadata under `/.well-known` still answer.
 */

let base = '';
let close: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  // As `npm start` does: the console's page is served from its build.
  ensureConsoleBuilt();
  const server = createLocalServer(loadGroupHandler, (err) => console.error(err), matchPage);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

const UNKNOWN = [
  '/v1/unknown',
  '/v1',
  '/v1/completions',
  '/mcp/tools',
  '/mcpx',
  '/sse',
  '/.well-known/oauth-protected-resource/elsewhere',
  '/.well-known/openid-configuration',
  '/.well-known/security.txt',
  '/api/infra-mcp/nothing',
  '/api/nothing-here',
  '/agents',
  '/not-a-console-route',
  '/favicon.ico',
];

describe('unknown paths on the local server', () => {
  it.each(UNKNOWN)('GET %s answers 404 JSON, never the console', async (pathname) => {
    const res = await fetch(`${base}${pathname}`, { headers: { accept: 'text/html,*/*' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ error: 'not found', code: 'NOT_FOUND' });
  });

  it.each(['/mcp/tools', '/sse', '/.well-known/openid-configuration', '/v1/unknown'])('POST %s answers 404 JSON too', async (pathname) => {
    const res = await fetch(`${base}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it.each(['/', '/agents/agt_1', '/settings/billing', '/sign-in', '/gateway/receipt'])(
    'GET %s (a console route) answers the console’s page',
    async (pathname) => {
      const res = await fetch(`${base}${pathname}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
    },
  );

  it('the OpenAI-compatible routes under /v1 are the API’s: no key, 401 in OpenAI’s shape', async () => {
    const res = await fetch(`${base}/v1/models`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { message: 'authentication required', type: 'authentication_error', code: 'auth_required', param: null },
    });
  });

  it('the MCP server and its OAuth metadata are the API’s: JSON, never the console', async () => {
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource`);
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as { resource?: string }).resource).toMatch(/\/mcp$/);
    const mcp = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('resource_metadata=');
  });
});
