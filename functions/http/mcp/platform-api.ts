import { allRoutes, type ContractRoute } from '#contract';

/**
 * The platform's own HTTP API, called with the MCP caller's credential. A tool is another front door
 * to a route, not another implementation: going through the route's pipeline gives it the route's
 * tenant rules, plan checks, rate limit, validation, Idempotency-Key and metering as they are, and
 * no function imports another group's code (each group is its own Lambda in AWS).
 */

const routesByOperation = new Map(allRoutes.map((route) => [route.operation, route]));

export const routeNamed = (operation: string): ContractRoute => {
  const route = routesByOperation.get(operation);
  if (!route) throw new Error(`no contract route ${operation}`);
  return route;
};

export interface RouteCall {
  operation: string;
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Forwarded as `Idempotency-Key` to a route whose policy honours it. */
  idempotencyKey?: string;
  accept?: string;
  signal?: AbortSignal;
}

export interface RouteAnswer {
  status: number;
  body: unknown;
}

/** The route's path with its `{name}` parts filled in; every part must be given. */
export function pathOf(route: ContractRoute, params: Record<string, string> = {}): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.operation} needs the path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

export class PlatformApi {
  constructor(
    private readonly baseUrl: string,
    private readonly authorization: string,
    private readonly requestId: string,
  ) {}

  /** The route's raw answer, for the callers that read a stream. */
  fetch(call: RouteCall): Promise<Response> {
    const route = routeNamed(call.operation);
    const url = new URL(pathOf(route, call.params), this.baseUrl);
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      authorization: this.authorization,
      accept: call.accept ?? 'application/json',
      // Ties the route's access log to the MCP request that made the call.
      'x-mcp-request-id': this.requestId,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.idempotencyKey && route.policy?.idempotent) headers['idempotency-key'] = call.idempotencyKey;
    return fetch(url, { method: route.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body), signal: call.signal });
  }

  async call(call: RouteCall): Promise<RouteAnswer> {
    const res = await this.fetch(call);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      // A route that answers text keeps it as text.
    }
    return { status: res.status, body };
  }
}
