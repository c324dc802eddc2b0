import { describe, expect, it } from 'vitest';
import { createRouter } from '#local/server';
import { allRoutes, routeKey } from '#contract';

describe('local router (same table as API Gateway)', () => {
  const route = createRouter();

  it('prefers a literal segment over a parameter, as API Gateway does', () => {
    const m = route('GET', '/api/agents/provision');
    expect(m && m !== 'method-not-allowed' && m.route.operation).toBe('listProvisionedAgents');
    const p = route('GET', '/api/agents/agt_123');
    expect(p && p !== 'method-not-allowed' && p.params).toEqual({ id: 'agt_123' });
  });

  it('decodes path parameters and tells a wrong method from an unknown path', () => {
    const m = route('GET', '/api/instance/u%5F1');
    expect(m && m !== 'method-not-allowed' && m.params.userId).toBe('u_1');
    expect(route('PATCH', '/api/health')).toBe('method-not-allowed');
    expect(route('GET', '/api/nothing-here')).toBeUndefined();
  });

  it('every route key is unique and every operation name is unique', () => {
    expect(new Set(allRoutes.map(routeKey)).size).toBe(allRoutes.length);
    expect(new Set(allRoutes.map((r) => r.operation)).size).toBe(allRoutes.length);
  });

  it('every contract route is reachable through the router', () => {
    for (const r of allRoutes) {
      const path = r.path.replace(/\{\w+\}/g, 'x1');
      const m = route(r.method, path);
      expect(m && m !== 'method-not-allowed' && routeKey(m.route), routeKey(r)).toBe(routeKey(r));
    }
  });
});
