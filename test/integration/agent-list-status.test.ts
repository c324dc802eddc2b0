import { describe, expect, it } from 'vitest';
import { handler as provisioner } from '#functions/workers/provisioner/handler';
import { runIdleStops } from '#functions/workers/heartbeat/idle-stop';
import { checkBudgets } from '#domain/ai/budget-guard';
import { ACCOUNT_SCOPE, utcMonth } from '#data/budgets';
import { forgetActivityMemo, recordActivity, setIdleStopMinutes } from '#data/idle-watch';
import { getInstance, settleLaunch } from '#data/instances';
import { flushRequestOutcomes } from '#data/request-outcomes';
import * as keys from '#data/keys';
import { tenant } from '#data/tenant';
import { accountSession, call, uniqueIp, type TestSession } from '../helpers/api';
import { putRunningInstance, putTestAgent } from '../security/route-samples';
import { countReads } from './metrics-helpers';
import { drain, runningAgent, sqsEvent, sqsRecord, subscribe, useAgentsTestBed } from './agents-helpers';

/**
 * The agent list reads the agents and a copy of the instance's status in one Query
 * (keys.agentListInstance). After every kind of change of the instance, the list must show what
 * the instance record says, and the copy must hold it.
 */
const bed = useAgentsTestBed({ PROVISION_HEALTH_ATTEMPTS: '150' });

async function provisionerRuns() {
  const messages = await drain(bed.queueUrl);
  const out = await provisioner(sqsEvent(...messages.map((m) => sqsRecord(m))));
  expect(out.batchItemFailures).toEqual([]);
}

const listed = async (user: TestSession) => {
  const res = await call('GET', '/api/agents', { session: user, ip: uniqueIp() });
  expect(res.status).toBe(200);
  return res.body.agents as { id: string; status: string; websocketUrl: string }[];
};

/** The list, the detail and the instance record agree, and the list's copy holds the instance's status. */
async function expectListShows(user: TestSession, agentId: string, status: string) {
  const instance = await getInstance(user.userId, true);
  expect(instance?.status).toBe(status);
  const copy = await tenant(user.userId).get<{ status?: string }>(keys.agentListInstance(user.userId), true);
  expect(copy?.status).toBe(status);
  const [item] = await listed(user);
  const detail = (await call('GET', `/api/agents/${agentId}`, { session: user, ip: uniqueIp() })).body.agent;
  expect(item).toMatchObject({ id: agentId, status, websocketUrl: detail.websocketUrl });
}

const lifecycle = async (user: TestSession, op: string) => {
  const res = await call('POST', `/api/instance/${user.userId}/${op}`, { session: user, ip: uniqueIp() });
  expect(res.status).toBe(200);
};

describe('the agent list follows the instance (one Query)', () => {
  it('after provision, stop, start, restart, idle stop, budget stop, a dead instance, and an agent deleted', async () => {
    const { user, agentId } = await runningAgent(bed);
    await expectListShows(user, agentId, 'running');
    // The websocket address is the edge's, on the account's subdomain.
    expect((await listed(user))[0]!.websocketUrl).toMatch(new RegExp(`^ws://agent-[0-9a-f]{16}\\.agents\\.localhost:${bed.edge.port}/agents/${agentId}$`));
    // One Query for the agents and the instance's status, beside the rate-limit write; no read of the instance.
    // Written now, so the request-outcome write (one answer in REQUEST_FLUSH_EVERY, or one every REQUEST_FLUSH_MS) does not ride on the counted call.
    // Counted on the process's one client: a write of the bed's own background work (the runtime's
    // reports, a timed flush) can land inside the window, so a clean window out of three decides; a
    // list that reads more would show it in all three.
    let commands: Record<string, number> = {};
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await flushRequestOutcomes();
      const reads = countReads();
      try {
        await listed(user);
      } finally {
        reads.restore();
      }
      commands = reads.tally.commands;
      if (!commands.PutCommand) break;
    }
    expect(commands).toEqual({ UpdateCommand: 1, QueryCommand: 1 });

    await lifecycle(user, 'stop');
    await expectListShows(user, agentId, 'stopped');
    await provisionerRuns();
    await expectListShows(user, agentId, 'stopped');

    await lifecycle(user, 'start');
    await expectListShows(user, agentId, 'provisioning');
    await provisionerRuns();
    await expectListShows(user, agentId, 'running');

    await lifecycle(user, 'restart');
    await expectListShows(user, agentId, 'provisioning');
    await provisionerRuns();
    await expectListShows(user, agentId, 'running');

    // Idle stop: the minute sweep, with the clock moved past the account's setting.
    forgetActivityMemo();
    const t0 = new Date();
    await setIdleStopMinutes(user.userId, 1, t0);
    await recordActivity(user.userId, t0);
    await runIdleStops({ now: new Date(t0.getTime() + 3 * 60_000) });
    expect((await getInstance(user.userId, true))?.stopReason).toBe('idle');
    await expectListShows(user, agentId, 'stopped');
    await provisionerRuns();

    await lifecycle(user, 'start');
    await provisionerRuns();
    await expectListShows(user, agentId, 'running');

    // Budget stop: this month's spend already at the account's cap.
    await tenant(user.userId).put({ ...keys.budgetSpend(user.userId, utcMonth(), ACCOUNT_SCOPE), spentUsd: 2 });
    await checkBudgets(user.userId, [{ scope: ACCOUNT_SCOPE, monthlyCapUsd: 1, updatedAt: new Date().toISOString() }]);
    expect((await getInstance(user.userId, true))?.stopReason).toBe('budget');
    await expectListShows(user, agentId, 'stopped');
    await provisionerRuns();

    await lifecycle(user, 'start');
    await provisionerRuns();
    await expectListShows(user, agentId, 'running');

    // A dead instance, as the heartbeat sweep and the task-stopped events record it.
    const running = (await getInstance(user.userId, true))!;
    expect(await settleLaunch(user.userId, running.generation, { status: 'error', reason: 'health check failed' }, new Date(), 'heartbeat')).toBeDefined();
    await expectListShows(user, agentId, 'error');

    // The deprecated delete removes the agent from the list; the copy stays for the instance.
    const removed = await call('DELETE', `/api/agents/${agentId}`, { session: user, ip: uniqueIp() });
    expect(removed.status).toBe(200);
    expect(await listed(user)).toEqual([]);
  });

  it('an instance written before the copy existed is read once beside the list, which fills the copy; later changes keep it', async () => {
    const user = await accountSession();
    const agentId = await putTestAgent(user.userId);
    await tenant(user.userId).update(keys.agent(user.userId, agentId), { expression: 'SET phase = :ready', values: { ':ready': 'ready' } });
    await putRunningInstance(user.userId);
    const copyOf = () => tenant(user.userId).get<{ status?: string; noInstance?: boolean }>(keys.agentListInstance(user.userId), true);
    expect(await copyOf()).toBeUndefined();
    expect((await listed(user))[0]).toMatchObject({ name: 'test agent', status: 'running' });
    expect((await copyOf())?.status).toBe('running');

    const running = (await getInstance(user.userId, true))!;
    await settleLaunch(user.userId, running.generation, { status: 'error', reason: 'gone' });
    expect((await copyOf())?.status).toBe('error');
    expect((await listed(user))[0]).toMatchObject({ name: 'test agent', status: 'error' });
  });

  it('agents with no instance yet: the copy says so, and the first launch replaces it', async () => {
    const { user, agentId } = await (async () => {
      const session = await accountSession();
      await subscribe(session.userId);
      const res = await call('POST', '/api/agents/provision', { session, body: { name: 'Waiting bot' }, ip: uniqueIp() });
      expect(res.status).toBe(201);
      return { user: session, agentId: res.body.agent.id as string };
    })();
    expect(await getInstance(user.userId, true)).toBeUndefined();
    expect(await listed(user)).toMatchObject([{ id: agentId, status: 'provisioning' }]);
    expect(await tenant(user.userId).get(keys.agentListInstance(user.userId), true)).toMatchObject({ noInstance: true });

    await provisionerRuns();
    await expectListShows(user, agentId, 'running');
  });
});
