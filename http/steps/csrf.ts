import { csrfTokenMatches } from '#domain/auth/csrf';
import { CSRF_COOKIE } from '../cookies';
import { HttpError } from '../errors';
import { type PipelineRequest, routeOf } from './request-state';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A caller signed in by cookie must echo the session's CSRF token on an unsafe method; Bearer callers need not. */
export function checkCsrf(request: PipelineRequest): void {
  const auth = request.internal.auth;
  if (auth?.via !== 'cookie' || !UNSAFE_METHODS.has(routeOf(request).method)) return;
  if (!csrfTokenMatches(auth.sessionId!, request.internal.cookies![CSRF_COOKIE], request.internal.headers!['x-csrf-token'])) {
    throw new HttpError(403, 'missing or invalid CSRF token', 'CSRF_INVALID');
  }
}
