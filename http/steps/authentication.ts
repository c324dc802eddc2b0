import { authenticate, AuthFailureError, hasForeignAuthorization, type AuthContext } from '#domain/auth/authenticate';
import { takesUserCredential } from '#contract/route';
import { SESSION_COOKIE } from '../cookies';
import { HttpError } from '../errors';
import { type PipelineRequest, routeOf } from './request-state';

/**
 * The caller of a user route: a session cookie, a Bearer JWT or an `sk_` API key. A bad credential
 * is refused even where auth is optional; `session` and `admin` routes require one, `admin` an admin.
 */
export async function authenticateCaller(request: PipelineRequest): Promise<void> {
  const route = routeOf(request);
  if (!takesUserCredential(route)) return;
  const headers = request.internal.headers!;
  let auth: AuthContext | undefined;
  try {
    auth = await authenticate(headers.authorization, request.internal.cookies![SESSION_COOKIE]);
  } catch (err) {
    if (!(err instanceof AuthFailureError)) throw err;
    if (err.code === 'AUTH_ERROR') throw new HttpError(500, err.message, 'AUTH_ERROR');
    throw new HttpError(401, err.message, err.code);
  }
  if (!auth && route.auth !== 'optional') {
    const why = hasForeignAuthorization(headers.authorization) ? 'Authorization must use the Bearer scheme' : 'authentication required';
    throw new HttpError(401, why, 'AUTH_REQUIRED');
  }
  if (route.auth === 'admin' && !auth!.isAdmin) throw new HttpError(403, 'admin access required', 'ADMIN_REQUIRED');
  request.internal.auth = auth;
}
