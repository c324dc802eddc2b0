/**
 * The web console's security headers, one list for both servers of the console: CloudFront in AWS
 * (lib/constructs/web-console.ts) and the local server (local/console.ts). `connect-src` also
 * admits the agents' subdomains, where the edge carries each agent's HTTP and websocket: https/wss
 * in AWS, plain http/ws on the local stack's port (`localEdgePort`).
 */
export function consoleSecurityHeaders(agentDomain: string | undefined, localEdgePort?: number) {
  const agents = !agentDomain
    ? []
    : localEdgePort === undefined
      ? [`https://*.${agentDomain}`, `wss://*.${agentDomain}`]
      : [`http://*.${agentDomain}:${localEdgePort}`, `ws://*.${agentDomain}:${localEdgePort}`];
  return {
    'content-security-policy': `default-src 'self'; connect-src ${["'self'", ...agents].join(' ')}; frame-ancestors 'none'; base-uri 'self'; object-src 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'x-frame-options': 'DENY',
  } as const;
}

/**
 * The console's own client routes (web/src/main.tsx's ROUTES, `:name` for a path segment): only these
 * answer its index.html, in AWS (the CloudFront function of lib/constructs/web-console.ts) and
 * locally (local/console.ts). Any other path that no API route serves answers 404 JSON, so an API
 * client probing `/v1/…`, `/mcp`, `/sse` or `/.well-known/…` never gets a 200 of HTML.
 */
export const CONSOLE_ROUTES = [
  '/',
  '/sign-in',
  '/sign-up',
  '/verify-email',
  '/reset-password',
  '/gateway/receipt',
  '/agents/:id',
  '/marketplace',
  '/keys',
  '/settings/billing',
  '/wallet',
  '/settings',
  '/oauth/authorize',
] as const;

/** A console route as a regular expression source, matched as the console's router matches (an optional trailing slash). */
export const consoleRoutePattern = (route: string) => `^${route === '/' ? '\\/' : `${route.replace(/\//g, '\\/').replace(/:\w+/g, '[^\\/]+')}\\/?`}$`;

/** Every console route as one regular expression source. */
export const CONSOLE_ROUTES_PATTERN = CONSOLE_ROUTES.map((route) => `(?:${consoleRoutePattern(route)})`).join('|');

/** Whether a path is one of the console's own routes (not an asset, not the API). */
export const isConsoleRoute = (pathname: string) => new RegExp(CONSOLE_ROUTES_PATTERN).test(pathname);

/**
 * Path prefixes the API answers at the site's root beside `/api/*`: the OpenAI-compatible API and
 * the MCP endpoints with their OAuth discovery documents. CloudFront sends them to the HTTP API, which
 * answers its own 404 JSON for a path no route has.
 */
export const API_ROOT_PATHS = ['/api/*', '/v1/*', '/mcp*', '/sse*', '/.well-known/*'] as const;

/** The console's 404 for a path that is neither its route, its asset, nor the API's. */
export const NOT_FOUND_BODY = JSON.stringify({ error: 'not found', code: 'NOT_FOUND' });

/** The local stack's mail page (local/mail-page.ts), which `GET /api/auth/providers` names to the console there; `.json` beside it for tools. */
export const LOCAL_MAIL_PAGE = '/_local/mail';
