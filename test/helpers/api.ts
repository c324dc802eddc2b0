import { randomUUID } from 'node:crypto';
import { loadGroupHandler } from '#local/handlers';
import { createRouter, lambdaContext, toApiGatewayEvent } from '#local/server';
import { csrfTokenFor } from '#domain/auth/csrf';
import { issueSessionToken } from '#domain/auth/jwt';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { CSRF_COOKIE, SESSION_COOKIE } from '#http/cookies';

const route = createRouter();

export interface CallOptions {
  body?: unknown;
  /** A raw body string, sent as is (for bad JSON and signature tests). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Send as `Authorization: Bearer <token>`. */
  bearer?: string;
  /** Send the session as a cookie, with a matching CSRF cookie and header unless `csrf: false`. */
  session?: TestSession;
  csrf?: boolean;
  ip?: string;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  cookies: string[];
  body: any;
  text: string | undefined;
}

/**
 * Calls a route exactly as API Gateway would: the local server's router and event builder, then the
 * group's real middy handler. No HTTP socket, so the security suites can walk hundreds of routes fast.
 */
export async function call(method: string, pathAndQuery: string, opts: CallOptions = {}): Promise<CallResult> {
  const url = new URL(pathAndQuery, 'http://local');
  const match = route(method, url.pathname);
  if (!match || match === 'method-not-allowed') throw new Error(`no contract route for ${method} ${url.pathname}`);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.session) {
    const cookies = [`${SESSION_COOKIE}=${opts.session.token}`];
    if (opts.csrf !== false) {
      cookies.push(`${CSRF_COOKIE}=${opts.session.csrf}`);
      headers['x-csrf-token'] = opts.session.csrf;
    }
    headers.cookie = [headers.cookie, ...cookies].filter(Boolean).join('; ');
  }
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const event = toApiGatewayEvent({
    method,
    path: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    body,
    sourceIp: opts.ip ?? '127.0.0.1',
    route: match.route,
    params: match.params,
  });
  const handler = await loadGroupHandler(match.route.group);
  const result = await handler(event, lambdaContext(match.route.group, event.requestContext.requestId));
  let parsed: unknown;
  try {
    parsed = result.body === undefined ? undefined : JSON.parse(result.body);
  } catch {
    parsed = undefined;
  }
  return {
    status: result.statusCode ?? 200,
    headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)])),
    cookies: result.cookies ?? [],
    body: parsed,
    text: result.body,
  };
}

export interface TestSession {
  userId: string;
  email: string;
  token: string;
  csrf: string;
}

/**
 * A signed-in user without going through sign-up (accounts tests cover that path), with a proven
 * address unless `emailVerified: false`: what the server issues after a confirmed sign-up.
 */
export async function testSession(opts: { email?: string; userId?: string; admin?: boolean; emailVerified?: boolean } = {}): Promise<TestSession> {
  const userId = opts.userId ?? `u_${randomUUID().replaceAll('-', '')}`;
  const email = opts.email ?? (opts.admin ? 'admin@example.com' : `${userId}@example.com`);
  const emailVerified = opts.emailVerified ?? true;
  const { token, jti } = await issueSessionToken({ userId, email, role: opts.admin && emailVerified ? 'admin' : 'user', emailVerified });
  return { userId, email, token, csrf: csrfTokenFor(jti) };
}

/** A fresh source address per test, so rate-limit windows of one test never touch another's. */
let ipCounter = 0;
export const uniqueIp = () => {
  ipCounter += 1;
  // Loopback only (127.0.0.0/8): these are labels in events, never contacted.
  return `127.${(process.pid % 250) + 1}.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
};

/**
 * A signed-in user whose account record exists (what API keys and the instance are judged by:
 * the account as it is now). The profile is written straight into the partition; sign-up itself
 * is covered by the accounts tests.
 */
export async function accountSession(opts: Parameters<typeof testSession>[0] = {}): Promise<TestSession> {
  const session = await testSession(opts);
  const at = new Date().toISOString();
  await tenant(session.userId).put({
    ...keys.profile(session.userId),
    userId: session.userId,
    email: session.email,
    name: session.email,
    plan: null,
    credits: 0,
    twoFactorEnabled: false,
    referralCode: `ref${session.userId.slice(-12)}`,
    emailVerified: opts.emailVerified ?? true,
    createdAt: at,
    updatedAt: at,
  });
  return session;
}

/** An active card subscription stored as the card webhook stores it; its id (what `POST /api/provision` must name). */
export async function storeActiveSubscription(userId: string, plan = 'solo'): Promise<string> {
  const subscriptionId = `sub_${randomUUID().replaceAll('-', '')}`;
  await tenant(userId).put({
    ...keys.subscription(userId),
    status: 'active',
    plan,
    subscriptionId,
    eventCreated: Date.now(),
    updatedAt: new Date().toISOString(),
  });
  return subscriptionId;
}

/** A signed-in user with an active card subscription (skills and paid routes). */
export async function subscribedSession(plan = 'solo', opts: Parameters<typeof testSession>[0] = {}): Promise<TestSession> {
  const session = await testSession(opts);
  await storeActiveSubscription(session.userId, plan);
  return session;
}
