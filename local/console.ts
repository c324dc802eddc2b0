import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ASSET_PREFIX, CONSOLE_DIST } from '#build/web-console';
import { consoleSecurityHeaders, isConsoleRoute, NOT_FOUND_BODY } from '#contract/console';
import { instanceConfig } from '#platform/config';

/** The console's headers here: its chat may open the agents' websockets through the edge on this port. */
const securityHeaders = () => consoleSecurityHeaders(instanceConfig().agentDomain, instanceConfig().localEdgePort);

/**
 * The web console as the local server serves it (CloudFront and S3 do the same in AWS,
 * lib/constructs/web-console.ts): hashed assets cached for a year, index.html for the console's own
 * client routes (contract/console.ts) and never cached, 404 JSON for any other path, and the same
 * security headers on every answer.
 */

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

export interface ConsoleAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | string;
}

const missing = (): ConsoleAnswer => ({
  status: 404,
  headers: { 'content-type': 'application/json; charset=utf-8', ...securityHeaders() },
  body: NOT_FOUND_BODY,
});

/** The console's answer to a GET of `pathname` (not under /api). */
export async function serveConsole(pathname: string, dist = CONSOLE_DIST): Promise<ConsoleAnswer> {
  if (pathname.startsWith(ASSET_PREFIX)) {
    const name = pathname.slice(ASSET_PREFIX.length);
    // Only the flat, hashed file names the build writes: no traversal, no folders.
    if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) return missing();
    const body = await readFile(path.join(dist, ASSET_PREFIX, name)).catch(() => undefined);
    if (!body) return missing();
    return {
      status: 200,
      headers: {
        'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream',
        'cache-control': 'public, max-age=31536000, immutable',
        ...securityHeaders(),
      },
      body,
    };
  }
  // Only the console's routes get its page: an API client probing `/v1/…` or `/.well-known/…` gets a 404 it can read.
  if (!isConsoleRoute(pathname)) return missing();
  const index = await readFile(path.join(dist, 'index.html')).catch(() => undefined);
  if (!index)
    return {
      status: 503,
      headers: { 'content-type': 'text/plain; charset=utf-8', ...securityHeaders() },
      body: 'The web console is not built: run `npm run build:web` (npm start builds it).\n',
    };
  return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...securityHeaders() }, body: index };
}
