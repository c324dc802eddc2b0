/**
 * The web console's security headers, one list for both servers of the console: CloudFront in AWS
 * (lib/constructs/web-console.ts) and the local server (local/console.ts).
 */
export const CONSOLE_SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'DENY',
} as const;
