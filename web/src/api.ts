import { createPlatformClient, type operations, type Schemas } from '../../clients/typescript';

/**
 * Every call goes through the typed client on this origin: the HttpOnly session cookie rides
 * along, and writes carry the CSRF token from GET /api/auth/csrf (kept in memory only, never in
 * storage, like the session itself).
 */
export const api = createPlatformClient({ baseUrl: location.origin, credentials: 'same-origin' });
export type { Schemas };

/** The 200 (or 201) JSON answer of an operation of the typed client. */
export type Answer<Op extends keyof operations> = operations[Op]['responses'] extends { 200: { content: { 'application/json': infer B } } }
  ? B
  : operations[Op]['responses'] extends { 201: { content: { 'application/json': infer B } } }
    ? B
    : never;

let csrfToken: string | undefined;
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Writes made before a session exists: no CSRF token to send (and none to fetch). */
const SESSIONLESS = new Set([
  '/api/auth/csrf',
  '/api/register',
  '/api/auth/callback/credentials',
  '/api/auth/callback/wallet',
  '/api/auth/forgot-password',
  '/api/auth/reset-password',
  '/api/auth/verify-email',
]);

export async function refreshCsrf(): Promise<void> {
  const { data } = await api.GET('/api/auth/csrf');
  csrfToken = data?.csrfToken;
}

export const forgetCsrf = () => {
  csrfToken = undefined;
};

api.use({
  async onRequest({ request }) {
    if (!UNSAFE.has(request.method) || SESSIONLESS.has(new URL(request.url).pathname)) return request;
    if (!csrfToken) await refreshCsrf();
    if (csrfToken) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
});
