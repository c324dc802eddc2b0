import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatewayToken, getInstance, subdomainFor, transitionInstance } from '#data/instances';
import * as keys from '#data/keys';
import { getGlobal, tenant, transact, tx } from '#data/tenant';
import { deleteAccount } from '#data/users';
import { backfillSubdomainLookups, type SubdomainBackfillResult } from '#domain/lifecycle/subdomain-backfill';
import { routeFromRecords } from '#edge/routes';
import { edgeRequest } from '../helpers/edge-client';
import { runningAgent, useAgentsTestBed } from './agents-helpers';

/**
 * Instances recorded before the edge's `SUBDOMAIN#` look-up existed: the backfill gives them one,
 * so the edge routes them; never over another account's name; account deletion removes what it
 * wrote; a second run changes nothing. The table is shared with other test files, whose heartbeat
 * sweeps may run a pass too, so the assertions read the records rather than one pass's counts alone.
 */

const bed = useAgentsTestBed();

/** Strips what ensureInstance now writes beside the instance: the record as it was before the edge. */
async function asRecordedBeforeTheEdge(userId: string) {
  await transact([tx.delete(keys.agentSubdomain(subdomainFor(userId)))]);
  await tenant(userId).update(keys.instance(userId), { expression: 'REMOVE globalKeys' });
}

/** A fresh sweep (an operator deleting the cursor does the same), run pass after pass to its end. */
async function sweepToTheEnd(): Promise<SubdomainBackfillResult> {
  await transact([tx.delete(keys.subdomainBackfill())]);
  const total: SubdomainBackfillResult = { found: 0, written: 0, collisions: 0, failed: 0, complete: false };
  for (let pass = 0; pass < 1000 && !total.complete; pass += 1) {
    const result = await backfillSubdomainLookups({ pageItems: 1000, pagesPerPass: 50 });
    for (const field of ['found', 'written', 'collisions', 'failed'] as const) total[field] += result[field];
    total.complete = result.complete;
  }
  return total;
}

const lookupOf = (userId: string) => getGlobal<{ userId?: string }>(keys.agentSubdomain(subdomainFor(userId)), true);

/** An instance record of the old shape for an account with no runtime (a stopped one is enough for the look-up). */
async function oldInstanceRecord(userId: string, status: 'stopped' | 'error' = 'error') {
  const at = new Date().toISOString();
  await tenant(userId).put({
    ...keys.instance(userId),
    userId,
    status,
    generation: 1,
    op: 'launch',
    subdomain: subdomainFor(userId),
    ownerEmail: `${userId}@example.com`,
    image: 'runtime:test',
    runtimeVersion: '0.0.0',
    createdAt: at,
    updatedAt: at,
    readyAgents: 0,
  });
}

describe('the subdomain look-up backfill', () => {
  it('makes an instance recorded before the look-up routable by the edge, and account deletion removes what it wrote', async () => {
    const { user } = await runningAgent(bed);
    await asRecordedBeforeTheEdge(user.userId);
    const subdomain = subdomainFor(user.userId);
    expect(await routeFromRecords(subdomain)).toBeUndefined();

    const result = await sweepToTheEnd();
    expect(result.failed).toBe(0);
    expect(await lookupOf(user.userId)).toMatchObject({ userId: user.userId });
    expect((await getInstance(user.userId, true))?.globalKeys).toEqual([keys.agentSubdomain(subdomain)]);
    const token = await gatewayToken(user.userId);
    const res = await edgeRequest(`http://${subdomain}.agents.localhost:${bed.edge.port}/health`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok' });

    await deleteAccount(user.userId);
    expect(await lookupOf(user.userId)).toBeUndefined();
  }, 90_000);

  it('never overwrites another account’s look-up, not with the backfill and not with the next lifecycle change', async () => {
    const userId = `u_${randomUUID()}`;
    await oldInstanceRecord(userId);
    const holder = { ...keys.agentSubdomain(subdomainFor(userId)), userId: 'someone-else' };
    await transact([tx.put(holder)]);

    const before = await backfillSubdomainLookups({ pageItems: 1000, pagesPerPass: 50 });
    const result = await sweepToTheEnd();
    expect(before.collisions + result.collisions).toBeGreaterThanOrEqual(1);
    expect(result.complete).toBe(true);
    expect(await lookupOf(userId)).toMatchObject({ userId: 'someone-else' });
    expect((await getInstance(userId, true))?.globalKeys).toBeUndefined();

    // A status change of that instance leaves the name with its holder too.
    const { changed } = await transitionInstance(userId, 'stop');
    expect(changed).toBe(true);
    expect(await lookupOf(userId)).toMatchObject({ userId: 'someone-else' });
    expect((await getInstance(userId, true))?.globalKeys).toBeUndefined();
  });

  it('the next lifecycle change writes a missing look-up under the same rule', async () => {
    const userId = `u_${randomUUID()}`;
    await oldInstanceRecord(userId);
    const { after } = await transitionInstance(userId, 'stop');
    expect(after.globalKeys).toEqual([keys.agentSubdomain(subdomainFor(userId))]);
    expect(await lookupOf(userId)).toMatchObject({ userId });
    expect((await getInstance(userId, true))?.globalKeys).toEqual([keys.agentSubdomain(subdomainFor(userId))]);
  });

  it('running it again changes nothing, and a completed backfill reads only its cursor', async () => {
    const userId = `u_${randomUUID()}`;
    await oldInstanceRecord(userId, 'stopped');
    await sweepToTheEnd();
    const instance = await getInstance(userId, true);
    const lookup = await lookupOf(userId);
    expect(lookup).toMatchObject({ userId });

    const again = await sweepToTheEnd();
    expect(again.complete).toBe(true);
    expect(await getInstance(userId, true)).toEqual(instance);
    expect(await lookupOf(userId)).toEqual(lookup);

    const completed = await backfillSubdomainLookups();
    expect(completed).toEqual({ found: 0, written: 0, collisions: 0, failed: 0, complete: true });
  });
});
