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
