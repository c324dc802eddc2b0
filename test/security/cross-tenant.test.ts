import { describe, expect, it } from 'vitest';
import { allRoutes } from '#contract';
import { takesUserCredential } from '#contract/route';
import { call, testSession, uniqueIp } from '../helpers/api';
import { defaultQuery, fillPath, intruderSetup, namesAgentInBody, ownedResources, withOwnedIds } from './route-samples';

const label = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
/**
 * Routes that take an id of something a user owns, in the path, the query or (for the skills
 * routes, which name the agent in the body) the body, called with a user's credential. The runtime
 * routes take no user credential; another account's gateway token is refused in auth.test.ts.
 */
const ownedIdRoutes = allRoutes.filter(
  (r) =>
    takesUserCredential(r) &&
    (/\{(id|userId|agentId)\}/.test(r.path) || Object.keys(r.query?.()._zod.def.shape ?? {}).some((k) => /agentId|id$/i.test(k)) || namesAgentInBody(r)),
);

describe("another user's ids are answered as missing or forbidden, with no data", () => {
  it('finds the routes that take owned ids', () => {
    expect(ownedIdRoutes.length).toBeGreaterThan(15);
    const skillRoutes = ownedIdRoutes.filter((r) => r.group === 'skills').map(label);
    expect(skillRoutes).toEqual(
      expect.arrayContaining(['GET /api/agents/{agentId}/skills', 'DELETE /api/agents/{agentId}/skills/{skillId}', 'POST /api/skills']),
    );
  });

  it.each(ownedIdRoutes.map((r) => [label(r), r] as const))('%s', async (_l, route) => {
    const owner = await testSession();
    const intruder = await testSession();
    const owned = { userId: owner.userId, ...(await ownedResources[route.group]?.(owner)) };
    await intruderSetup[route.group]?.(intruder);
    const res = await call(route.method, fillPath(route, owned) + defaultQuery(route, owned), {
      body: withOwnedIds(route, owned),
      session: intruder,
      ip: uniqueIp(),
    });
    // 501 only while the route is not built yet.
    expect([403, 404, 501]).toContain(res.status);
    const text = res.text ?? '';
    for (const value of Object.values(owned)) expect(text).not.toContain(value);
    expect(text).not.toContain(owner.email);
  });
});
