import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { AuthContext } from '#domain/auth/authenticate';
import type { RuntimeAgent } from '#domain/auth/runtime-agent';
import type { RouteDefinition, RouteGroup } from '#contract/route';

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
  /** The calling agent runtime, on `auth: 'runtime'` routes. */
  runtimeAgent: R['auth'] extends 'runtime' ? RuntimeAgent : undefined;
  requestId: string;
  event: ApiEvent;
}

export type Operation<R extends RouteDefinition> = (ctx: OperationContext<R>) => Promise<unknown>;

export type Operations<G extends RouteGroup> = {
  [R in G['routes'][number] as R['operation']]?: Operation<R>;
};

/**
 * What the steps learn of one request, in the order they learn it, kept on middy's
 * `request.internal` so each request carries its own. A field is set by the step that
 * owns it (named beside it) and read only by the steps after it.
 */
export interface PipelineState extends Record<string, unknown> {
  /** request logging */
  startedAt?: number;
  /** route */
  route?: RouteDefinition;
  headers?: Record<string, string | undefined>;
  cookies?: Record<string, string>;
  ip?: string;
  /** body cap */
  rawBody?: string;
  /** JSON body */
  parsedBody?: unknown;
  /** authentication */
  auth?: AuthContext;
  /** validation */
  input?: { params: unknown; query: unknown; body: unknown };
  /** runtime authentication */
  runtimeAgent?: RuntimeAgent;
}

export type PipelineRequest = Request<ApiEvent, ApiResult, Error, Context, PipelineState>;
export type PipelineMiddleware = MiddlewareObj<ApiEvent, ApiResult, Error, Context, PipelineState>;

/** One check of the request before the operation runs; it refuses the request by throwing. */
export type Step = (request: PipelineRequest) => void | Promise<void>;

/** The request's route: set by the first step, so every later step may rely on it. */
export const routeOf = (request: PipelineRequest): RouteDefinition => request.internal.route!;

export const requestIdOf = (event: ApiEvent) => event.requestContext?.requestId ?? crypto.randomUUID();
