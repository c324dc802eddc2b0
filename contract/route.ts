import type * as z from 'zod/mini';
import { lazySchema } from './lazy-schema';

/**
 * How a route authenticates its caller.
 * - none: public; the handler may still verify something of its own (a webhook signature).
 * - optional: a valid credential is used when present; a bad one is still refused (401).
 * - session: a session cookie, a Bearer JWT or a Bearer `sk_` API key is required.
 * - admin: as session, and the account's email must be in the configured admin list.
 * - runtime: the account's agent runtime, by the gateway token of the path's `{userId}`
 *   (`Authorization: Bearer <gateway token>`); any other credential, a user's included, is refused (401).
 */
export type AuthMode = 'none' | 'optional' | 'session' | 'admin' | 'runtime';

/** A user's credential (session cookie, Bearer JWT, API key) is read on the route: every mode but `none` and `runtime`. */
export const takesUserCredential = (route: Pick<RouteDefinition, 'auth'>): boolean => route.auth !== 'none' && route.auth !== 'runtime';

/** Rate-limit scopes of the spec's section 8; numbers live in platform/config.ts. */
export type RateLimitScope =
  | 'gateway'
  | 'agents'
  | 'chat'
  | 'instance'
  | 'provision'
  | 'register'
  | 'forgotPassword'
  | 'resetPassword'
  | 'signIn'
  | 'chainRead'
  | 'verifyEmail'
  | 'verifyEmailResend'
  | 'standingSetupRemoval'
  | 'modelApi';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface BodyHandling {
  /**
   * `raw`: the pipeline does not parse the body as JSON and hands the handler the raw text
   * (signature checks need the exact bytes), or lets the handler decide how to answer a bad body.
   */
  kind?: 'json' | 'raw';
  /**
   * `handler`: the spec gives this route its own answer to a bad body (e.g. 401 on the wallet
   * callback), so the handler validates with `body` itself instead of the pipeline's generic 400.
   */
  validatedBy?: 'pipeline' | 'handler';
  /** The body is a documented pass-through (forwarded as is), so unknown fields are allowed. */
  open?: boolean;
  /**
   * The status a body not sent as `application/json` gets: 415 `UNSUPPORTED_MEDIA_TYPE` unless the
   * spec names another (the v1 gateway answers 400 `UNSUPPORTED_CONTENT_TYPE`).
   */
  nonJsonStatus?: 400;
}

export interface RoutePolicy {
  /**
   * Sign-in and sign-up: refused when a browser says the request comes from another site
   * (`Origin` not the application's, or `Sec-Fetch-Site: cross-site`/`same-site`), so a cross-site
   * form cannot sign a victim into the attacker's account (login CSRF). Clients that send neither
   * header (curl, servers) are not browsers carrying a victim's cookies and pass.
   */
  sameOrigin?: boolean;
  /**
   * The route honours an `Idempotency-Key` header (money moves, outbound messages): the pipeline
   * keeps the first completed answer under the caller, operation, credential and key for a day and
   * replays it for that credential's repeat; the same key with another path or body is refused, as
   * is a repeat while the first runs.
   */
  idempotent?: boolean;
  /**
   * With `idempotent`: the answer carries a secret shown once (a new API key), so the copy kept for
   * replay is envelope-encrypted (platform/crypto/envelope.ts), never stored in the clear.
   */
  secretAnswer?: boolean;
}

/** The body is handed over as raw text, not parsed. */
export const takesRawBody = (route: RouteDefinition): boolean => route.bodyHandling?.kind === 'raw';
/** The handler, not the pipeline, validates the body against `body`. */
export const handlerValidatesBody = (route: RouteDefinition): boolean => route.bodyHandling?.validatedBy === 'handler';

export interface RouteDefinition {
  /** camelCase, unique across the whole contract; doubles as the OpenAPI operationId. */
  operation: string;
  method: HttpMethod;
  /** API Gateway syntax: `/api/agents/{id}`. */
  path: string;
  auth: AuthMode;
  rateLimit?: RateLimitScope;
  summary: string;
  description?: string;
  deprecated?: boolean;
  /** The request's schemas, built on the route's first call (`schemasOf`), never at a cold start. */
  params?: Lazy<z.core.$ZodObject>;
  query?: Lazy<z.core.$ZodObject>;
  body?: Lazy<z.core.$ZodType>;
  /** How the pipeline takes the body; by default it parses JSON and validates it against `body`. */
  bodyHandling?: BodyHandling;
  /** A valid request body: documents the route and seeds the generic security suites. */
  example?: unknown;
  /**
   * Fields merged into every error body of this route, where the spec gives the route its own
   * failure shape (the lifecycle endpoints answer `{success: false, status: 'error'}`).
   */
  errorFields?: Record<string, unknown>;
  /** The answer sets or clears the session and CSRF cookies (documented as `Set-Cookie`). */
  setsCookies?: boolean;
  /** What the pipeline enforces around the operation beyond auth and rate limit. */
  policy?: RoutePolicy;
  /** Status code → schema of the answer; used for documentation and by contract tests, never by a function. */
  responses: Lazy<Record<number, z.core.$ZodType>>;
}

export type ErrorShape = 'platform' | 'openai';

export interface RouteGroup {
  /** kebab-case; the Lambda lives in functions/<group>/handler.ts. */
  group: string;
  description: string;
  /** Groups that talk only to DynamoDB get the tighter bundle budget (docs/architecture.md §11). */
  dynamoOnly: boolean;
  /**
   * Some routes answer server-sent events: the group's function also gets a `streamHandler` export
   * (http/response-streaming.ts) behind a Function URL in response-streaming mode.
   */
  streams?: boolean;
  /**
   * The shape of the group's error bodies: the platform's `{error, code}` by default, or, for a group
   * that speaks another API's wire format to that API's clients, theirs (`openai`:
   * `{error: {message, type, code, param}}`, which the OpenAI SDKs turn into their typed errors).
   */
  errorShape?: ErrorShape;
  routes: readonly RouteDefinition[];
}

/**
 * A schema the contract builds when it is first needed, not when the module loads: a Lambda's cold
 * start builds none (building a zod schema node is costly while the code is still cold, and a group's
 * contract holds hundreds of them, a cost every function would pay at init), and its first request
 * builds only the schemas of the route it serves (docs/architecture.md §11).
 */
export type Lazy<S> = () => S;

export { isLazySchema, lazySchema, type LazySchema } from './lazy-schema';

type Built<F> = F extends () => infer S ? S : undefined;

/** A route's request schemas, built. */
export interface RouteSchemas<R extends RouteDefinition = RouteDefinition> {
  params: Built<R['params']>;
  query: Built<R['query']>;
  body: Built<R['body']>;
}

const builtRouteSchemas = new WeakMap<RouteDefinition, RouteSchemas>();

/** The route's request schemas, built on its first call and kept for the next ones. */
export function schemasOf<R extends RouteDefinition>(route: R): RouteSchemas<R> {
  let schemas = builtRouteSchemas.get(route);
  if (!schemas) {
    // The body on its first read: a route whose handler validates its own body may never need it.
    const body = lazySchema(() => route.body?.());
    schemas = {
      params: route.params?.(),
      query: route.query?.(),
      get body() {
        return body();
      },
    };
    builtRouteSchemas.set(route, schemas);
  }
  return schemas as RouteSchemas<R>;
}

export const defineGroup = <const G extends RouteGroup>(group: G): G => group;

/** `POST /api/agents/{id}`: the key API Gateway puts in `event.routeKey`. */
export const routeKey = (route: Pick<RouteDefinition, 'method' | 'path'>) => `${route.method} ${route.path}`;
