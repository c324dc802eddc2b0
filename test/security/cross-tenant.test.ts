import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../shared/contract';
import { keys } from '../../shared/db/keys';
import { tenant } from '../../shared/db/tenant';
import { call, testSession, uniqueIp } from '../helpers/api';
import { defaultQuery, fillPath, ownedResources } from './route-samples';

const label = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
/** Routes that take an id of something a user owns, in the path or the query. */
const ownedIdRoutes = allRoutes.filter(
  (r) => r.auth !== 'none' && (/\{(id|userId)\}/.test(r.path) || Object.keys(r.query?.shape ?? {}).some((k) => /agentId|id$/i.test(k))),
);

describe("another user's ids are answered as missing or forbidden, with no data", () => {
  it('finds the routes that take owned ids', () => {
    expect(ownedIdRoutes.length).toBeGreaterThan(15);
  });

  it.each(ownedIdRoutes.map((r) => [label(r), r] as const))('%s', async (_l, route) => {
    const owner = await testSession();
    const intruder = await testSession();
    // A subscribed intruder, so paid routes answer on ownership rather than with 402.
    await tenant(intruder.userId).put({
      ...keys.subscription(intruder.userId),
      status: 'active',
      plan: 'solo',
      eventCreated: Date.now(),
      updatedAt: new Date().toISOString(),
    });
    const owned = { userId: owner.userId, ...(await ownedResources[route.group]?.(owner)) };
    const res = await call(route.method, fillPath(route, owned) + defaultQuery(route, owned), {
      body: route.example,
      session: intruder,
      ip: uniqueIp(),
    });
    // 501 only while the route's issue has not built it.
    expect([403, 404, 501]).toContain(res.status);
    const text = res.text ?? '';
    for (const value of Object.values(owned)) expect(text).not.toContain(value);
    expect(text).not.toContain(owner.email);
  });
});
