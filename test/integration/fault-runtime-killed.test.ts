import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healLocalExits } from '#local/heal';
import { handler } from '#functions/workers/provisioner/handler';
import { readOutbox } from '#adapters/email';
import { localLauncher } from '#adapters/launcher-local';
import { getInstance } from '#data/instances';
import { listLifecycleEvents, type LifecycleEvent } from '#data/lifecycle-events';
import type { RelaunchResult } from '#domain/lifecycle/relaunch';
import { call, uniqueIp, type TestSession } from '../helpers/api';
import { drain, runningAgent, sqsEvent, sqsRecord, useAgentsTestBed, waitFor } from './agents-helpers';

/**
 * A running local runtime killed from outside (SIGKILL) is noticed through the
 * child's `exit`, relaunched through the provisioner, and recorded with its reason; killed more
 * often than the hourly bound it is left in `error` with that reason; a stop the owner asked for
 * is never undone, and an operation sent during a relaunch wins over it.
 */

const bed = useAgentsTestBed({ INSTANCE_RELAUNCH_BACKOFF_SECONDS: '0,1', INSTANCE_RELAUNCHES_PER_HOUR: '2' });
const outcomes: Promise<RelaunchResult>[] = [];

beforeAll(() => healLocalExits((outcome) => outcomes.push(outcome)));
afterAll(() => localLauncher().onUnexpectedExit(undefined));

/** When runQueued last received its messages (before the provisioner ran them). */
let lastDeliveredAt = 0;

/** Waits for queued provisioning work (a delayed relaunch shows once its delay is over) and runs the provisioner on it, as the event source would. */
async function runQueued(timeoutMs = 10_000): Promise<unknown[]> {
  const messages = await waitFor(
    async () => {
      const found = await drain(bed.queueUrl);
      return found.length ? found : undefined;
    },
    'a queued provisioning message',
    timeoutMs,
  );
  lastDeliveredAt = Date.now();
  const out = await handler(sqsEvent(...messages.map((m) => sqsRecord(m))));
  expect(out.batchItemFailures).toEqual([]);
  return messages;
}

const instanceOf = async (user: TestSession) => (await call('GET', `/api/instance/${user.userId}`, { session: user, ip: uniqueIp() })).body;
const eventsOf = async (userId: string): Promise<LifecycleEvent[]> => (await listLifecycleEvents(userId, 100)).events;

async function kill(userId: string): Promise<{ pid: number; generation: number; at: number }> {
  const instance = (await getInstance(userId, true))!;
  expect(instance.status).toBe('running');
  const pid = Number(instance.handle!.id);
  const settledBefore = outcomes.length;
  process.kill(pid, 'SIGKILL');
  const at = Date.now();
  await waitFor(async () => outcomes.length > settledBefore, 'the exit noticed', 5000);
  await outcomes.at(-1);
  return { pid, generation: instance.generation, at };
}

// Each case launches real runtime processes (about a second each when idle, far more on a loaded two-core machine).
describe('a runtime killed from outside', { timeout: 120_000 }, () => {
  it('is noticed within seconds, relaunched and running again, with a lifecycle event giving the signal', async () => {
    const { user } = await runningAgent(bed);
    const killed = await kill(user.userId);
    const noticedMs = Date.now() - killed.at;
    const relaunching = (await getInstance(user.userId, true))!;
    expect(relaunching).toMatchObject({ status: 'provisioning', op: 'restart', generation: killed.generation + 1 });
    expect(noticedMs).toBeLessThan(3000);

    expect(await runQueued()).toEqual([{ kind: 'lifecycle', userId: user.userId, generation: killed.generation + 1, op: 'restart' }]);
    await waitFor(async () => (await instanceOf(user)).status === 'running', 'the instance running again');
    const relaunchMs = Date.now() - killed.at;
    const running = (await getInstance(user.userId, true))!;
    expect(Number(running.handle!.id)).not.toBe(killed.pid);
    expect(await bed.launcher.aliveFor(user.userId)).toHaveLength(1);
    console.info(`fault-runtime-killed: exit noticed in ${noticedMs} ms, running again ${relaunchMs} ms after the kill`);

    const healing = (await eventsOf(user.userId)).filter((e) => e.cause === 'self-heal');
    expect(healing.map((e) => e.type)).toEqual(['instance.unhealthy', 'instance.requested']);
    expect(healing[0]).toMatchObject({ generation: killed.generation, status: 'running' });
    expect(healing[0]!.reason).toContain('signal SIGKILL');
    expect(healing[1]).toMatchObject({ op: 'restart', generation: killed.generation + 1, status: 'provisioning' });
    expect(healing[1]!.reason).toMatch(/relaunch 1 of at most 2 this hour, in 0 s/);
  });

  it('killed more often than the hourly bound, it is left in error with the reason, and its agent shows it', async () => {
    const { user, agentId } = await runningAgent(bed);
    await kill(user.userId);
    await runQueued();
    await waitFor(async () => (await getInstance(user.userId, true))?.status === 'running', 'the first relaunch');

    // The second relaunch waits out the next step of the backoff (1 s) before it is delivered.
    const second = await kill(user.userId);
    await runQueued();
    expect(lastDeliveredAt - second.at).toBeGreaterThanOrEqual(900);
    await waitFor(async () => (await getInstance(user.userId, true))?.status === 'running', 'the second relaunch');

    await kill(user.userId);
    const failed = (await getInstance(user.userId, true))!;
    expect(failed.status).toBe('error');
    expect(failed.lastError).toMatch(/signal SIGKILL.*after 2 relaunches within an hour/);
    expect(await drain(bed.queueUrl)).toEqual([]);
    const shown = await instanceOf(user);
    expect(shown).toMatchObject({ status: 'error', failureReason: failed.lastError });
    const agent = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
    expect(agent).toMatchObject({ status: 'error', failureReason: failed.lastError });
    expect((await eventsOf(user.userId)).at(-1)).toMatchObject({ type: 'instance.error', cause: 'self-heal', reason: failed.lastError });
    const mails = (await readOutbox(user.email)).filter((m) => m.subject === 'Your agent stopped and was not relaunched');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain('signal SIGKILL');

    // The owner's start gives it a fresh budget: it runs, and a kill is healed again.
    expect((await call('POST', `/api/instance/${user.userId}/start`, { session: user, ip: uniqueIp() })).status).toBe(200);
    await runQueued();
    await waitFor(async () => (await getInstance(user.userId, true))?.status === 'running', 'the owner start');
    await kill(user.userId);
    expect((await getInstance(user.userId, true))?.status).toBe('provisioning');
    await runQueued();
    await waitFor(async () => (await getInstance(user.userId, true))?.status === 'running', 'healed after the owner start');
  });

  it('a stop the owner asked for is never undone, even when the process dies before the stop reaches it', async () => {
    const { user } = await runningAgent(bed);
    const before = (await getInstance(user.userId, true))!;
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    // The process dies between the owner's stop (written) and the provisioner's stop job.
    const settledBefore = outcomes.length;
    process.kill(Number(before.handle!.id), 'SIGKILL');
    await waitFor(async () => outcomes.length > settledBefore, 'the exit noticed', 5000);
    expect(await outcomes.at(-1)).toEqual({ outcome: 'ignored' });
    await runQueued();
    expect((await getInstance(user.userId, true))?.status).toBe('stopped');
    expect(await drain(bed.queueUrl)).toEqual([]);
    expect((await eventsOf(user.userId)).filter((e) => e.cause === 'self-heal')).toEqual([]);
    expect(await bed.launcher.aliveFor(user.userId)).toEqual([]);
  });

  it('an operation sent while a relaunch is queued wins: the relaunch launches nothing', async () => {
    const { user } = await runningAgent(bed);
    await kill(user.userId);
    const launches = bed.launcher.launchesFor(user.userId).length;
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user, ip: uniqueIp() })).status).toBe(200);
    const queued = await runQueued();
    expect(queued).toHaveLength(2);
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(launches);
    expect((await getInstance(user.userId, true))?.status).toBe('stopped');
    expect(await bed.launcher.aliveFor(user.userId)).toEqual([]);
  });
});
