import middy, { type MiddlewareObj, type Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import { authenticate, AuthFailureError, hasForeignAuthorization, type AuthContext } from '#domain/auth/authenticate';
import { csrfTokenMatches } from '#domain/auth/csrf';
import { config } from '#platform/config';
import type { EnvelopeRecord } from '#platform/crypto/envelope';
import { isDatabaseUnavailable } from '#data/client';
import { raceDeadline, withDeadline } from '#platform/deadline';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '#data/idempotency';
import { flushRequestOutcomes, noteRequestOutcome } from '#data/request-outcomes';
import { ConditionFailedError, InvalidCursorError } from '#data/tenant';
import { routeKey, schemasOf, type RouteDefinition, type RouteGroup } from '#contract/route';
import { CSRF_COOKIE, readCookies, SESSION_COOKIE } from './cookies';
import { httpErrorOf } from './domain-errors';
import { HttpError, notImplemented } from './errors';
import { logger } from './logger';
import { consumeRateLimit, rateLimitSubject } from './rate-limit';
import { crossSiteReason, isJsonContentType, jsonNestingExceeds, MAX_JSON_DEPTH } from './request-guards';
import { RawBody, Reply, sseFrame, StreamReply } from './reply';
import { attachStream, canStream } from './streaming';

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;

/** What a route's lazy schema (`() => schema`, contract/route.ts) parses to. */
type Infer<F> = F extends () => infer S ? (S extends z.core.$ZodType ? z.output<S> : undefined) : undefined;

/** What every operation receives: validated input, the caller, and the raw event for the rare need. */
export interface OperationContext<R extends RouteDefinition = RouteDefinition> {
  route: R;
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  /** Validated body; for routes whose handler validates it the parsed JSON, for raw bodies undefined. */
  body: R['bodyHandling'] extends { validatedBy: 'handler' } ? unknown : Infer<R['body']>;
  rawBody: string;
  headers: Record<string, string | undefined>;
  cookies: Record<string, string>;
  /** The address API Gateway saw; never a client-supplied header. */
  ip: string;
  auth: R['auth'] extends 'session' | 'admin' ? AuthContext : AuthContext | undefined;
  requestId: string;
  event: ApiEvent;
}

export type Operation<R extends RouteDefinition> = (ctx: OperationContext<R>) => Promise<unknown>;

export type Operations<G extends RouteGroup> = {
  [R in G['routes'][number] as R['operation']]?: Operation<R>;
};

interface PipelineState extends Record<string, unknown> {
  route?: RouteDefinition;
  ctx?: OperationContext;
  startedAt?: number;
}

type PipelineRequest = Request<ApiEvent, ApiResult, Error, Context, PipelineState>;
type Middleware = MiddlewareObj<ApiEvent, ApiResult, Error, Context, PipelineState>;

/** The prepared context of each in-flight event, handed from the middleware to the handler. */
const preparedContexts = new WeakMap<ApiEvent, OperationContext>();

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const baseHeaders = (requestId: string) => ({
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': requestId,
});

function toResult(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}, cookies: string[] = []): ApiResult {
  const result: ApiResult = { statusCode: status, headers: { ...baseHeaders(requestId), ...headers } };
  if (body instanceof RawBody) result.body = body.text;
  else if (body !== undefined) result.body = JSON.stringify(body);
  else delete result.headers!['content-type'];
  if (cookies.length) result.cookies = cookies;
  return result;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' };

async function* sseText(events: AsyncIterable<{ event: string; data: unknown }>) {
  for await (const e of events) yield sseFrame(e);
}

/** Streamed where the transport streams, else collected into one `text/event-stream` body. */
async function streamResult(stream: StreamReply, event: ApiEvent, requestId: string): Promise<ApiResult> {
  const result = toResult(200, undefined, requestId);
  result.headers = { ...result.headers, ...SSE_HEADERS, ...stream.headers };
  if (canStream(event)) return attachStream(result, sseText(stream.events));
  let body = '';
  for await (const frame of sseText(stream.events)) body += frame;
  result.body = body;
  return result;
}

const requestIdOf = (event: ApiEvent) => event.requestContext?.requestId ?? crypto.randomUUID();

/** Request id and structured access log: one line per request with route, status and duration. */
const requestLogging = (): Middleware => ({
  before: (request: PipelineRequest) => {
    request.internal.startedAt = performance.now();
    logger().appendKeys({ requestId: requestIdOf(request.event), route: request.event.routeKey });
  },
  after: (request: PipelineRequest) => logAccess(request),
  onError: (request: PipelineRequest) => logAccess(request),
});

async function logAccess(request: PipelineRequest) {
  const ms = performance.now() - (request.internal.startedAt ?? performance.now());
  const status = request.response?.statusCode;
  logger().info('request', { status, ms: Math.round(ms * 100) / 100 });
  // The public uptime and success rate (data/request-outcomes.ts): a write every so many answers, not one per request.
  // Never on a 503: the table is likely what failed, and the answer must not wait for it once more.
  if (status !== undefined && noteRequestOutcome(status, ms) && status !== 503) {
    await flushRequestOutcomes().catch((err) => logger().warn('could not record request outcomes; kept for the next write', { error: (err as Error).name }));
  }
  logger().removeKeys(['requestId', 'route']);
}

/** When a client should retry after the database failed to answer in time. */
const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/** Last line of defence: every failure becomes `{error, code?}`; no stack trace ever leaves. */
const errorResponder = (): Middleware => ({
  onError: (request: PipelineRequest) => {
    const err = request.error;
    const requestId = requestIdOf(request.event);
    const routeFields = request.internal.route?.errorFields ?? {};
    let http: HttpError;
    const known = httpErrorOf(err);
    if (known) http = known;
    else if (err instanceof InvalidCursorError) http = new HttpError(400, 'invalid cursor', 'INVALID_CURSOR');
    else if (err instanceof ConditionFailedError) http = new HttpError(409, 'conflicting change, try again', 'CONFLICT');
    else if (isDatabaseUnavailable(err)) {
      // Not a bug: the table did not answer within its budget (data/client.ts). Retryable.
      logger().warn('database unavailable', { error: (err as Error).name, code: (err as { code?: string }).code });
      http = new HttpError(
        503,
        'the service is briefly unavailable; retry shortly',
        'BACKEND_UNAVAILABLE',
        {},
        { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
      );
    } else {
      logger().error('unhandled error', err as Error);
      http = new HttpError(500, 'internal error', 'INTERNAL');
    }
    if (http.status >= 500 && known) logger().warn('server-side failure', { status: http.status, code: http.code });
    const body = { ...routeFields, ...http.extra, error: http.message, ...(http.code ? { code: http.code } : {}) };
    request.response = toResult(http.status, body, requestId, http.headers);
  },
});

function bodyText(event: ApiEvent): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

type Issue = z.core.$ZodIssue;

/**
 * A union's own issue says only "Invalid input"; the branch that came closest (fewest issues) says
 * what to fix, so that is what the client gets.
 */
function flattenIssues(issues: readonly Issue[], base: PropertyKey[] = []): { path: PropertyKey[]; issue: Issue }[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length) {
      const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
      return flattenIssues(closest, path);
    }
    return [{ path, issue }];
  });
}

/** 400 VALIDATION_ERROR with the issues, for handlers that validate a body themselves. */
export function validationError(where: string, error: Pick<z.core.$ZodError, 'issues'>): HttpError {
  const issues = flattenIssues(error.issues).map(({ path, issue }) => {
    const keysNote = issue.code === 'unrecognized_keys' ? `: ${issue.keys.join(', ')}` : '';
    return { path: [where, ...path.map(String)].join('.'), message: issue.message + keysNote };
  });
  return new HttpError(400, `invalid request ${where}`, 'VALIDATION_ERROR', { issues });
}

function parseWith<S extends z.core.$ZodType | undefined>(schema: S, value: unknown, where: string) {
  if (!schema) return undefined;
  // The functional form takes any zod 4 schema, classic or mini (Lambda-side schemas are zod/mini).
  const out = z.safeParse(schema, value);
  if (!out.success) throw validationError(where, out.error);
  return out.data;
}

/** Headers a group adds to every answer, errors raised before its handler included (CORS). */
export type AnswerHeaders = (event: ApiEvent) => Record<string, string>;

export interface HandlerOptions {
  /**
   * A group-level CORS policy: its headers go on every answer of the group, so a browser can also
   * read the 401, 415, 429 and 400 the pipeline gives before the handler runs.
   */
  cors?: AnswerHeaders;
  /**
   * Seals the answers of `policy.secretAnswer` routes before they are kept for Idempotency-Key replay.
   * Given by the groups that have such routes, so only their functions bundle the key client.
   */
  answerSealer?: AnswerSealer;
}

export interface AnswerSealer {
  seal(userId: string, body: string): Promise<EnvelopeRecord>;
  open(userId: string, sealed: EnvelopeRecord): Promise<string>;
}

const answerHeaders = (headersOf: AnswerHeaders): Middleware => {
  const add = (request: PipelineRequest) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...headersOf(request.event) };
  };
  return { after: add, onError: add };
};

/** Body size cap, JSON parse, auth, CSRF, rate limit and validation, in that order (docs/architecture.md §4). */
function prepare(routes: Map<string, RouteDefinition>): Middleware {
  return {
    before: (request: PipelineRequest) => beforeDeadline(prepareRequest(routes, request)),
  };
}

async function prepareRequest(routes: Map<string, RouteDefinition>, request: PipelineRequest): Promise<void> {
  const event = request.event;
  const route = routes.get(event.routeKey);
  if (!route) throw new HttpError(404, 'no such route', 'NOT_FOUND');
  request.internal.route = route;
  const headers = event.headers ?? {};
  const cookies = readCookies(event);
  const ip = event.requestContext?.http?.sourceIp ?? 'unknown';

  const raw = bodyText(event);
  if (Buffer.byteLength(raw) > config().maxBodyBytes) throw new HttpError(413, 'request body too large', 'PAYLOAD_TOO_LARGE');
  if (route.policy?.sameOrigin) {
    const why = crossSiteReason(headers, config().appUrl);
    if (why) throw new HttpError(403, `cross-site request refused: ${why}`, 'CROSS_SITE_REQUEST');
  }
  let parsedBody: unknown;
  if (route.body && route.bodyHandling?.kind !== 'raw') {
    // Only JSON is read as JSON: a `text/plain` body is what a cross-site form can send without a preflight.
    if (raw.trim() !== '' && !isJsonContentType(headers['content-type'])) {
      const spec400 = route.bodyHandling?.nonJsonStatus === 400;
      throw new HttpError(
        spec400 ? 400 : 415,
        'the request body must be sent as Content-Type: application/json',
        spec400 ? 'UNSUPPORTED_CONTENT_TYPE' : 'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    if (jsonNestingExceeds(raw)) throw new HttpError(400, `request body nests deeper than ${MAX_JSON_DEPTH} levels`, 'JSON_TOO_DEEP');
    try {
      parsedBody = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch {
      throw new HttpError(400, 'request body is not valid JSON', 'INVALID_JSON');
    }
  }

  let auth: AuthContext | undefined;
  if (route.auth !== 'none') {
    try {
      auth = await authenticate(headers.authorization, cookies[SESSION_COOKIE]);
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
    if (auth?.via === 'cookie' && UNSAFE_METHODS.has(route.method)) {
      if (!csrfTokenMatches(auth.sessionId!, cookies[CSRF_COOKIE], headers['x-csrf-token'])) {
        throw new HttpError(403, 'missing or invalid CSRF token', 'CSRF_INVALID');
      }
    }
  }

  if (route.rateLimit) {
    const rule = config().rateLimits[route.rateLimit]!;
    await consumeRateLimit(route.rateLimit, rateLimitSubject(rule, ip, auth?.userId));
  }

  const schemas = schemasOf(route);
  const params = parseWith(schemas.params, event.pathParameters ?? {}, 'params');
  const query = parseWith(schemas.query, event.queryStringParameters ?? {}, 'query');
  const body = route.bodyHandling?.validatedBy === 'handler' || route.bodyHandling?.kind === 'raw' ? parsedBody : parseWith(schemas.body, parsedBody, 'body');

  const ctx = {
    route,
    params,
    query,
    body,
    rawBody: raw,
    headers,
    cookies,
    ip,
    auth,
    requestId: requestIdOf(event),
    event,
  } as OperationContext;
  request.internal.ctx = ctx;
  preparedContexts.set(event, ctx);
}

/** Time left to log and send the answer after the deadline, before the function itself is stopped. */
const ANSWER_MARGIN_MS = 1000;

/** The request's budget: REQUEST_DEADLINE_MS, never past the function's own remaining time less the margin. */
function requestBudgetMs(context: Partial<Context> | undefined): number {
  const functionLeft = context?.getRemainingTimeInMillis?.();
  const configured = config().requestDeadlineMs;
  return functionLeft === undefined ? configured : Math.min(configured, functionLeft - ANSWER_MARGIN_MS);
}

const deadlineExceeded = () => new HttpError(504, 'the request did not finish in time; retry it', 'DEADLINE_EXCEEDED');

/**
 * `work`, or 504 DEADLINE_EXCEEDED when the request's deadline passes first. The work itself goes on
 * (a DynamoDB call is bounded by its own budget); a write under an Idempotency-Key still stores its
 * answer, so the client's retry with the same key learns what happened.
 */
const beforeDeadline = <T>(work: Promise<T>): Promise<T> => raceDeadline(work, deadlineExceeded);

/** Printable ASCII without spaces, as the IETF Idempotency-Key draft's clients send (UUIDs, ULIDs). */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Answers above this are not kept (DynamoDB items stop at 400 KB); the key is released instead. */
const MAX_STORED_ANSWER_BYTES = 300_000;

/**
 * Idempotency-Key for the routes that set `policy.idempotent` (contract): the first completed answer is
 * kept under the caller's partition, the operation and the key for 24 h and replayed for a repeat;
 * another body under the same key is refused (422), as is a repeat while the first still runs (409).
 * Failures keep nothing, so a retry with the same key runs again. Without the header nothing changes.
 */
async function idempotently(ctx: OperationContext, sealer: AnswerSealer | undefined, run: () => Promise<ApiResult>): Promise<ApiResult> {
  const key = ctx.headers['idempotency-key'];
  if (!ctx.route.policy?.idempotent || key === undefined || !ctx.auth) return run();
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new HttpError(400, 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', 'INVALID_IDEMPOTENCY_KEY');
  }
  const { userId } = ctx.auth;
  const operation = ctx.route.operation;
  const claim = await claimIdempotencyKey(userId, operation, key, ctx.rawBody);
  if (claim.outcome === 'reused') {
    throw new HttpError(422, 'this Idempotency-Key was used with a different request body', 'IDEMPOTENCY_KEY_REUSED');
  }
  if (claim.outcome === 'in-progress') {
    throw new HttpError(409, 'a request with this Idempotency-Key is still being processed; retry later', 'IDEMPOTENCY_IN_PROGRESS');
  }
  if (claim.outcome === 'replay') {
    const { statusCode, sealedBody, contentType } = claim.answer;
    const body = sealedBody && sealer ? await sealer.open(userId, sealedBody) : claim.answer.body;
    const headers = { ...baseHeaders(ctx.requestId), ...(contentType ? { 'content-type': contentType } : {}), 'idempotent-replayed': 'true' };
    return { statusCode, headers, ...(body !== undefined ? { body } : {}) };
  }
  let result: ApiResult;
  try {
    result = await run();
  } catch (err) {
    await releaseIdempotencyKey(userId, operation, key);
    throw err;
  }
  const status = result.statusCode ?? 200;
  const body = typeof result.body === 'string' ? result.body : undefined;
  // A streamed answer has no body to keep, so only JSON-like bodies (or a 204) are stored.
  const storable = body !== undefined ? Buffer.byteLength(body) <= MAX_STORED_ANSWER_BYTES : status === 204;
  if (status < 300 && !result.cookies && storable) {
    const contentType = result.headers?.['content-type'];
    const kept = ctx.route.policy?.secretAnswer && body !== undefined ? { sealedBody: await sealer!.seal(userId, body) } : { body };
    await completeIdempotencyKey(userId, operation, key, {
      statusCode: status,
      ...kept,
      contentType: typeof contentType === 'string' ? contentType : undefined,
    });
  } else await releaseIdempotencyKey(userId, operation, key);
  return result;
}

/**
 * The one place middleware is composed. A group's handler file calls this with its contract and a
 * map of operation name → function; operations not yet built answer 501 through the same pipeline.
 */
export function createHandler<G extends RouteGroup>(group: G, operations: NoInfer<Operations<G>>, options: HandlerOptions = {}) {
  const routes = new Map(group.routes.map((r) => [routeKey(r), r as RouteDefinition]));
  const unsealed = group.routes.find((r) => r.policy?.idempotent && r.policy?.secretAnswer && !options.answerSealer);
  if (unsealed) throw new Error(`${unsealed.operation} keeps a secret answer for replay: give createHandler an answerSealer`);
  const impl = operations as Record<string, Operation<RouteDefinition> | undefined>;

  // Registered before the error responder, so its onError runs after the error became an answer.
  const policies = options.cors ? [answerHeaders(options.cors)] : [];
  const handler = middy<ApiEvent, ApiResult, Error, Context, PipelineState>()
    .use(requestLogging())
    .use(policies)
    .use(errorResponder())
    .use(prepare(routes))
    .handler(async (event: ApiEvent): Promise<ApiResult> => {
      const ctx = preparedContexts.get(event)!;
      const operation = impl[ctx.route.operation];
      if (!operation) throw notImplemented();
      return beforeDeadline(
        idempotently(ctx, options.answerSealer, async () => {
          const result = await operation(ctx);
          if (result instanceof Reply) return toResult(result.status, result.body, ctx.requestId, result.headers, result.cookies);
          if (result instanceof StreamReply) return streamResult(result, event, ctx.requestId);
          return toResult(200, result, ctx.requestId);
        }),
      );
    });
  // The deadline wraps the whole chain, so authentication and the rate-limit write run inside it too.
  return (event: ApiEvent, context: Context): Promise<ApiResult> => withDeadline(requestBudgetMs(context), () => handler(event, context));
}
