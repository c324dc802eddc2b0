import { describe, expect, it } from 'vitest';
import { getIdleWatch, recordActivity, forgetActivityMemo, setIdleStopMinutes } from '#data/idle-watch';
import { getInstance, settleLaunch } from '#data/instances';
import * as keys from '#data/keys';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { tenant } from '#data/tenant';
import { runIdleStops } from '#functions/workers/heartbeat/idle-stop';
import { captureEvents } from '../helpers/event-queue';
import { accountSession, call, storeActiveSubscription } from '../helpers/api';
import { putRunningInstance } from '../security/route-samples';

const minutes = (from: Date, n: number) => new Date(from.getTime() + n * 60_000);

async function idleAccount(idleStopMinutes: number | null, t0: Date) {
  const { userId } = await accountSession();
  await storeActiveSubscription(userId, 'label');
  await putRunningInstance(userId, t0);
  if (idleStopMinutes !== null) await setIdleStopMinutes(userId, idleStopMinutes, t0);
  await recordActivity(userId, t0);
  return userId;
}

describe('idle auto-stop (minute sweep, injected clock)', () => {
  it('stops an instance idle past its setting with reason idle and an instance.stopped event; keeps an active one', async () => {
    forgetActivityMemo();
    // The real time: sweeps at an injected later minute must not find other tests' accounts idle.
    const t0 = new Date();
    const idle = await idleAccount(2, t0);
    const active = await idleAccount(2, t0);
    await recordActivity(active, minutes(t0, 1.5));

    await runIdleStops({ now: minutes(t0, 1) });
    expect((await getInstance(idle, true))?.status).toBe('running');

    const events = await captureEvents();
    try {
      await runIdleStops({ now: minutes(t0, 2.5) });
      // The webhook's event: the account's instance.stopped, carrying the reason.
      const queued = (await events.drain()).filter((e) => e.accountId === idle && e.type === 'instance.stopped');
      expect(queued).toHaveLength(1);
      expect(JSON.stringify(queued[0])).toContain('"idle"');
    } finally {
      await events.stop();
    }
    expect(await getInstance(idle, true)).toMatchObject({ status: 'stopped', stopReason: 'idle' });
    const stopped = (await listLifecycleEvents(idle, 20)).events.find((e) => e.type === 'instance.stopped');
    expect(stopped).toMatchObject({ cause: 'idle', reason: 'idle' });
    expect((await getInstance(active, true))?.status).toBe('running');

    // The active one goes once its own activity is old enough; the stopped one is never started again.
    await runIdleStops({ now: minutes(t0, 4) });
    expect(await getInstance(active, true)).toMatchObject({ status: 'stopped', stopReason: 'idle' });
    expect((await getInstance(idle, true))?.status).toBe('stopped');
  });

  it('0 = never, and without a setting the plan default applies', async () => {
    forgetActivityMemo();
    const t0 = new Date();
    const never = await idleAccount(0, t0);
    const byPlan = await idleAccount(null, t0);

    await runIdleStops({ now: minutes(t0, 10) });
    expect((await getInstance(never, true))?.status).toBe('running');
    expect((await getIdleWatch(never))?.gsi1pk).toBeUndefined();
    expect((await getInstance(byPlan, true))?.status).toBe('running');
    expect((await getIdleWatch(byPlan))?.idleAfterMinutes).toBe(30);

    // The plan default's check is planned at the last activity plus 30 minutes (a sweep that late would stop other tests' instances).
    expect((await getIdleWatch(byPlan))?.gsi1sk).toBe(minutes(t0, 30).toISOString());
    expect((await getIdleWatch(never))?.idleAfterMinutes).toBe(0);
  });

  it('activity writes at most once a minute', async () => {
    forgetActivityMemo();
    const t0 = new Date(Date.UTC(2031, 2, 1, 10, 0));
    const userId = await idleAccount(5, t0);
    await recordActivity(userId, minutes(t0, 0.5));
    expect((await getIdleWatch(userId))?.lastActivityAt).toBe(t0.toISOString());
    await recordActivity(userId, minutes(t0, 1.2));
    expect((await getIdleWatch(userId))?.lastActivityAt).toBe(minutes(t0, 1.2).toISOString());
  });
});

describe('idle auto-stop: a launch that reaches running is activity', () => {
  it('arms the idle watch of the account when the launch settles running', async () => {
    forgetActivityMemo();
    const t0 = new Date(Date.UTC(2031, 3, 1, 10, 0));
    const { userId } = await accountSession();
    await putRunningInstance(userId, t0);
    await tenant(userId).update(keys.instance(userId), { expression: 'SET #s = :p', names: { '#s': 'status' }, values: { ':p': 'provisioning' } });
    expect(await settleLaunch(userId, 1, { status: 'running', set: {} }, t0)).toMatchObject({ status: 'running' });
    expect(await getIdleWatch(userId)).toMatchObject({ lastActivityAt: t0.toISOString(), gsi1pk: expect.stringMatching(/^IDLEDUE#/) });
  });
});

describe('idle auto-stop: the setting over POST /api/heartbeat', () => {
  it('sets, reads, refuses out-of-range values and resets idleStopMinutes', async () => {
    const session = await accountSession();
    expect((await call('POST', '/api/heartbeat', { session, body: { idleStopMinutes: 15 } })).body).toMatchObject({ idleStopMinutes: 15 });
    expect((await call('GET', '/api/heartbeat', { session })).body.heartbeat.idleStopMinutes).toBe(15);
    expect((await getIdleWatch(session.userId))?.idleStopMinutes).toBe(15);
    for (const bad of [-1, 1.5, 7 * 24 * 60 + 1, '15'])
      expect((await call('POST', '/api/heartbeat', { session, body: { idleStopMinutes: bad } })).status, String(bad)).toBe(400);
    expect((await call('POST', '/api/heartbeat', { session, body: { idleStopMinutes: 0 } })).body.idleStopMinutes).toBe(0);
    expect((await call('DELETE', '/api/heartbeat', { session })).status).toBe(200);
    expect((await call('GET', '/api/heartbeat', { session })).body.heartbeat.idleStopMinutes).toBeNull();
  });
});
