import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { expect } from 'vitest';
import { readOutbox } from '#adapters/email';
import { CSRF_COOKIE, SESSION_COOKIE } from '#http/cookies';
import { call, uniqueIp, type CallResult, type TestSession } from '../helpers/api';

export const uniqueEmail = (label = 'user') => `${label}-${randomUUID().slice(0, 12)}@example.com`;

/** The value a Set-Cookie line sets for `name`, or undefined. */
export function cookieValue(cookies: string[], name: string): string | undefined {
  const line = cookies.find((c) => c.startsWith(`${name}=`));
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
}

/** The session a sign-in answer set, in the shape `call` sends back as cookies. */
export function sessionFrom(res: CallResult): TestSession {
  const token = cookieValue(res.cookies, SESSION_COOKIE);
  const csrf = cookieValue(res.cookies, CSRF_COOKIE);
  if (!token || !csrf) throw new Error(`no session cookies in ${res.status} ${res.text}`);
  const claims = decodeJwt(token);
  return { token, csrf, userId: String(claims.sub), email: String(claims.email) };
}

export async function register(email: string, password = 'correct horse battery', extra: Record<string, unknown> = {}) {
  return call('POST', '/api/register', { body: { email, password, ...extra }, ip: uniqueIp() });
}

export async function signIn(email: string, password = 'correct horse battery', ip = uniqueIp()) {
  return call('POST', '/api/auth/callback/credentials', { body: { email, password }, ip });
}

/** A real account through the API: sign-up then sign-in, with its session. */
export async function signUp(opts: { email?: string; password?: string; extra?: Record<string, unknown> } = {}) {
  const email = opts.email ?? uniqueEmail();
  const password = opts.password ?? 'correct horse battery';
  const created = await register(email, password, opts.extra);
  expect(created.status, created.text).toBe(201);
  const signedIn = await signIn(email, password);
  expect(signedIn.status, signedIn.text).toBe(200);
  return { ...sessionFrom(signedIn), password, id: created.body.id as string };
}

/** The token of the newest confirmation link emailed to `email` (the local outbox, as a developer reads it). */
export async function verificationTokenFor(email: string): Promise<string> {
  const mails = await readOutbox(email);
  const link = /(http\S+verify-email\?token=\S+)/.exec(mails.filter((m) => m.text.includes('/verify-email?')).at(-1)?.text ?? '')?.[1];
  if (!link) throw new Error(`no verification link for ${email}`);
  return new URL(link).searchParams.get('token')!;
}

/** Confirms the address through the real flow: the emailed link, then the verify route. */
export async function verifyEmailOf(email: string) {
  const res = await call('POST', '/api/auth/verify-email', { body: { token: await verificationTokenFor(email) }, ip: uniqueIp() });
  expect(res.status, res.text).toBe(200);
  return res;
}
