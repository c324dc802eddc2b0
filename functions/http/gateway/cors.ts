import { GATEWAY_CORS } from '#contract/gateway';
import { gatewayConfig } from '#platform/config';

/** Response headers a browser script may read (spec 4.12: the receipt, the challenge, the plugin). */
const EXPOSED_HEADERS = ['Payment-Receipt', 'WWW-Authenticate', 'x-plugin-id'];
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** CORS headers for a request from `origin`: only configured origins are named; others get none. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  const allowed = gatewayConfig().allowedOrigins;
  const headers: Record<string, string> = { vary: 'Origin' };
  if (!origin) return headers;
  if (allowed.includes('*')) headers['access-control-allow-origin'] = '*';
  else if (allowed.includes(origin.toLowerCase())) headers['access-control-allow-origin'] = origin;
  else return headers;
  headers['access-control-expose-headers'] = EXPOSED_HEADERS.join(', ');
  return headers;
}

export function preflightHeaders(origin: string | undefined): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': GATEWAY_CORS.allowMethods.join(', '),
    'access-control-allow-headers': GATEWAY_CORS.allowHeaders.join(', '),
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
  };
}
