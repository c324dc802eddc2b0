import { describe, expect, it } from 'vitest';
import { handler } from '#functions/workers/provisioner/handler';
import { ADMIN_AGENT_LIMIT } from '#domain/billing/plans';
import { agentQuotaUsed, createAgent, deleteAgent, failAgent, getAgent, listAgents, type AgentRecord } from '#data/agents';
import { ensureInstance, getInstance, settleLaunch, transitionInstance } from '#data/instances';
import { db } from '#data/client';
import * as keys from '#data/keys';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { accountSession, call, testSession, uniqueIp, type TestSession } from '../helpers/api';
import { sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

/**
 * The agents waiting for a launch join the instance in the very write that makes it `running`
 * (settleLaunch): a client never sees the instance running beside one of them still provisioning.
 */

// The readers below poll far faster than a client would; the per-user read limits are not under test here.
useAgentsTestBed({ RATE_LIMITS: JSON.stringify({ agents: { limit: 1_000_000 }, instance: { limit: 1_000_000 } }) });

interface Observation {
  instance: string | undefined;
  agents: string[];
}

/**
 * Reads what a client reads, over and over until `done`: the instance (GET /api/instance/{userId}),
 * then the agent list. Every agent exists before the launch, so once the instance read says
 * `running`, the list read after it must show them all running, and no single list may show one
 * agent running beside another still provisioning.
 */
async function pollLikeAClient(user: TestSession, done: () => boolean): Promise<Observation[]> {
  const seen: Observation[] = [];
  while (!done()) {
    const instance = await call('GET', `/api/instance/${user.userId}`, { session: user });
    const list = await call('GET', '/api/agents', { session: user });
    expect(list.status).toBe(200);
    // Until the job's first write the account has no instance (404), and once it has one it keeps it.
    if (instance.status === 404) expect(seen.filter((o) => o.instance !== undefined)).toEqual([]);
    else expect(instance.status).toBe(200);
    seen.push({ instance: instance.status === 200 ? instance.body.status : undefined, agents: list.body.agents.map((a: { status: string }) => a.status) });
  }
  return seen;
}

const agentIdsOf = async (userId: string, phase: AgentRecord['phase']) =>
  (await listAgents(userId, true))
    .filter((a) => a.phase === phase)
    .map((a) => a.id)
    .sort();

const waitingAgent = (userId: string, i: number) =>
  createAgent(userId, { name: `waiting ${i}`, model: 'anthropic/claude-3-5-haiku', config: {}, source: 'api' }, ADMIN_AGENT_LIMIT);

/** A new account with `count` agents waiting for its first launch, under way (generation 1). */
async function launchFor(count: number) {
  const user = await testSession();
  const agents: AgentRecord[] = [];
  for (let i = 0; i < count; i += 1) agents.push(await waitingAgent(user.userId, i));
  await ensureInstance(user.userId, { ownerEmail: user.email, image: 'img', runtimeVersion: '1', jobOwner: 'test' });
  return { userId: user.userId, agents };
}

describe('the agents waiting for a launch settle in the write that settles it', () => {
  it('a client polling during a real provision never sees the instance running beside an agent still provisioning', async () => {
    const user = await accountSession();
    await subscribe(user.userId, 'collective');
    const agentIds: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await call('POST', '/api/agents/provision', { session: user, body: { name: `agent ${i}` }, ip: uniqueIp() });
      expect(res.status).toBe(201);
      agentIds.push(res.body.agent.id);
    }
    let launched = false;
    const readers = Array.from({ length: 3 }, () => pollLikeAClient(user, () => launched));
    // The first agent's job launches the instance; the other seven wait for that launch.
    const out = await handler(sqsEvent(sqsRecord({ kind: 'agent', userId: user.userId, agentId: agentIds[0], ownerEmail: user.email })));
    launched = true;
    const seen = (await Promise.all(readers)).flat();
    expect(out.batchItemFailures).toEqual([]);

    const runningWithWaiting = seen.filter((o) => o.instance === 'running' && o.agents.some((s) => s !== 'running'));
    const mixedLists = seen.filter((o) => o.agents.includes('running') && o.agents.includes('provisioning'));
    expect({ runningWithWaiting: runningWithWaiting.slice(0, 3), mixedLists: mixedLists.slice(0, 3) }).toEqual({ runningWithWaiting: [], mixedLists: [] });
    // The readers did watch the launch: before it (all provisioning) and after it (all running).
    expect(seen.some((o) => o.instance === 'provisioning' && o.agents.every((s) => s === 'provisioning'))).toBe(true);
    const last = seen.at(-1)!;
    expect(last).toEqual({ instance: 'running', agents: Array(8).fill('running') });

    const instance = await getInstance(user.userId, true);
    expect(instance).toMatchObject({ status: 'running', readyAgents: 8 });
    const events = (await listLifecycleEvents(user.userId, 100)).events;
    const running = events.filter((e) => e.type === 'agent.running');
    expect(running.map((e) => e.agentId).sort()).toEqual([...agentIds].sort());
    // Written with the instance's own event, under the same operation.
    expect(new Set(running.map((e) => e.at))).toEqual(new Set([events.find((e) => e.type === 'instance.running')!.at]));
    expect(new Set(running.map((e) => e.operationId))).toEqual(new Set([instance!.operationId]));
  }, 60_000);

  it('more agents than one transaction holds all join, and a failed or deleted agent stays as it was', async () => {
    const { userId, agents } = await launchFor(62);
    expect(await failAgent(userId, agents[0]!.id, 'failed before the launch settled')).toBe(true);
    expect(await deleteAgent(userId, agents[1]!, 'provisioning')).toBe(true);

    const after = await settleLaunch(userId, 1, { status: 'running', set: {} });
    expect(after).toMatchObject({ status: 'running', readyAgents: 60 });
    expect(await getInstance(userId, true)).toMatchObject({ status: 'running', readyAgents: 60 });
    expect(await agentIdsOf(userId, 'ready')).toEqual(
      agents
        .slice(2)
        .map((a) => a.id)
        .sort(),
    );
    expect(await agentIdsOf(userId, 'provisioning')).toEqual([]);
    expect(await getAgent(userId, agents[0]!.id, true)).toMatchObject({ phase: 'error', failureReason: 'failed before the launch settled' });
    expect(await getAgent(userId, agents[1]!.id, true)).toBeUndefined();
    expect(await agentQuotaUsed(userId)).toBe(60);
    const events = (await listLifecycleEvents(userId, 200)).events.filter((e) => e.type === 'agent.running');
    expect(events.map((e) => e.agentId).sort()).toEqual(
      agents
        .slice(2)
        .map((a) => a.id)
        .sort(),
    );
  });

  it('an agent created after the waiting ones were read, just before the write, is not left behind', async () => {
    const { userId, agents } = await launchFor(2);
    let late: AgentRecord | undefined;
    // Runs the creation on the real table right before the settle's transaction is sent, once.
    db().middlewareStack.add(
      (next) => async (args) => {
        const items = (args.input as { TransactItems?: { Update?: { Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> } }[] })
          .TransactItems;
        const transition = items?.find((i) => i.Update?.Key?.pk === keys.instance(userId).pk && i.Update.Key.sk === keys.instance(userId).sk);
        if (!late && transition?.Update?.ExpressionAttributeValues?.[':to'] === 'running') late = await waitingAgent(userId, 2);
        return next(args);
      },
      { step: 'initialize', name: 'createAgentBeforeRunningWrite' },
    );
    try {
      expect(await settleLaunch(userId, 1, { status: 'running', set: {} })).toMatchObject({ status: 'running', readyAgents: 3 });
    } finally {
      db().middlewareStack.remove('createAgentBeforeRunningWrite');
    }
    expect(late).toBeDefined();
    expect(await agentIdsOf(userId, 'ready')).toEqual([...agents, late!].map((a) => a.id).sort());
  });

  it('agents deleted, failed and created while the launch settles: none is brought back, and the counts agree', async () => {
    for (let round = 0; round < 4; round += 1) {
      const { userId, agents } = await launchFor(6);
      const [settled, deleted, failed] = await Promise.all([
        settleLaunch(userId, 1, { status: 'running', set: {} }),
        // Each removal read the agent waiting; it lands only while it still is (else false).
        deleteAgent(userId, agents[0]!, 'provisioning'),
        failAgent(userId, agents[1]!.id, 'failed meanwhile'),
        waitingAgent(userId, 6),
      ]);
      expect(settled?.status).toBe('running');
      const stored = await listAgents(userId, true);
      const byId = new Map(stored.map((a) => [a.id, a]));
      if (deleted) expect(byId.has(agents[0]!.id)).toBe(false);
      else expect(byId.get(agents[0]!.id)?.phase).toBe('ready');
      expect(byId.get(agents[1]!.id)?.phase).toBe(failed ? 'error' : 'ready');
      const instance = await getInstance(userId, true);
      expect(instance?.readyAgents).toBe(stored.filter((a) => a.phase === 'ready').length);
      expect(await agentQuotaUsed(userId)).toBe(stored.filter((a) => a.phase !== 'error').length);
    }
  });

  it('a launch given up fails its waiting agents in the same write, quota back; one relaunched at once keeps them waiting', async () => {
    const { userId, agents } = await launchFor(3);

    // The local stack's restart recovery: error, then a new launch at once, which the agents wait for.
    expect(await settleLaunch(userId, 1, { status: 'error', reason: 'the local stack stopped during the launch' })).toMatchObject({ status: 'error' });
    expect(await agentIdsOf(userId, 'provisioning')).toEqual(agents.map((a) => a.id).sort());
    expect(await agentQuotaUsed(userId)).toBe(3);

    const relaunched = await transitionInstance(userId, 'start', { jobOwner: () => 'test' });
    const given = await settleLaunch(
      userId,
      relaunched.after.generation,
      { status: 'error', reason: 'never healthy', failWaiting: true },
      new Date(),
      'dead-letter',
    );
    expect(given).toMatchObject({ status: 'error', readyAgents: 0 });
    expect(await agentIdsOf(userId, 'error')).toEqual(agents.map((a) => a.id).sort());
    expect(await agentQuotaUsed(userId)).toBe(0);
    const events = (await listLifecycleEvents(userId, 100)).events;
    const failedAt = events.filter((e) => e.type === 'instance.error').at(-1)!.at;
    const agentErrors = events.filter((e) => e.type === 'agent.error');
    expect(agentErrors.map((e) => [e.agentId, e.reason, e.cause, e.at])).toEqual(
      expect.arrayContaining(agents.map((a) => [a.id, 'never healthy', 'dead-letter', failedAt])),
    );
    expect(agentErrors).toHaveLength(3);
  });
});
