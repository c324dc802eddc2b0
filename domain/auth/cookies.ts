import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export const SESSION_COOKIE = 'session';
export const CSRF_COOKIE = 'csrf_token';
export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

/** API Gateway v2 hands cookies over as `event.cookies`; a plain `cookie` header is read too. */
export function readCookies(event: Pick<APIGatewayProxyEventV2, 'cookies' | 'headers'>): Record<string, string> {
  const pairs = [...(event.cookies ?? []), ...(event.headers?.cookie?.split(';') ?? [])];
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) continue;
    const name = pair.slice(0, eq).trim();
    if (name in out) continue;
    try {
      out[name] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // A cookie we cannot decode is not one we set; ignore it rather than fail the request.
    }
  }
  return out;
}

export interface CookieOptions {
  maxAgeSeconds: number;
  httpOnly: boolean;
  secure: boolean;
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', `Max-Age=${o.maxAgeSeconds}`, 'SameSite=Lax'];
  if (o.httpOnly) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}
