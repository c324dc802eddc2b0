import type { RouteDefinition } from './route';

/**
 * Matches a method and path against contract routes, as API Gateway does. The local server builds
 * its events with it, and the response-streaming Lambda entry resolves Function URL requests (whose
 * events carry no route key) with it.
 */

interface CompiledRoute<R> {
  route: R;
  regex: RegExp;
  paramNames: string[];
  /** Literal segments win over parameters, as in API Gateway (`/api/agents/provision` over `/api/agents/{id}`). */
  paramCount: number;
}

function compile<R extends Pick<RouteDefinition, 'method' | 'path'>>(route: R): CompiledRoute<R> {
  const paramNames: string[] = [];
  const pattern = route.path
    .split('/')
    .map((seg) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (!m) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      paramNames.push(m[1]!);
      return '([^/]+)';
    })
    .join('/');
  return { route, regex: new RegExp(`^${pattern}/?$`), paramNames, paramCount: paramNames.length };
}

export function matchRoutes<R extends Pick<RouteDefinition, 'method' | 'path'>>(routes: readonly R[]) {
  const compiled = routes.map(compile).sort((a, b) => a.paramCount - b.paramCount);
  return (method: string, path: string) => {
    let pathMatched = false;
    for (const c of compiled) {
      const m = c.regex.exec(path);
      if (!m) continue;
      pathMatched = true;
      if (c.route.method !== method) continue;
      const params: Record<string, string> = {};
      c.paramNames.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1]!);
      });
      return { route: c.route, params };
    }
    return pathMatched ? ('method-not-allowed' as const) : undefined;
  };
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};
