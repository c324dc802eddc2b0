import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runIdleStops } from '#functions/workers/heartbeat/idle-stop';
import { forgetActivityMemo, getIdleWatch, recordActivity, setIdleStopMinutes } from '#data/idle-watch';
import { getInstance } from '#data/instances';
import { call, uniqueIp } from '../helpers/api';
import { runningAgent, useAgentsTestBed } from './agents-helpers';

const bed = useAgentsTestBed();
const minutes = (from: Date, n: number) => new Date(from.getTime() + n * 60_000);

/** A websocket to the agent that waits for `ready` and then sends nothing. */
async function silentSocket(websocketUrl: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(`${websocketUrl}?token=${token}`);
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (d) => JSON.parse(d.toString()).type === 'ready' && resolve());
    ws.once('error', reject);
  });
  return ws;
}

describe('idle auto-stop and websockets (minute sweep, injected clock)', () => {
  it('an open websocket that sends nothing keeps the instance running; once closed, the idle period runs from the close', async () => {
    const { user, agentId } = await runningAgent(bed);
    forgetActivityMemo();
    const t0 = new Date();
    await setIdleStopMinutes(user.userId, 2, t0);
    await recordActivity(user.userId, t0);
    const { websocketUrl } = (await call('GET', `/api/agents/${agentId}`, { session: user })).body.agent;
    const token = (await call('GET', `/api/instance/${user.userId}/token`, { session: user, ip: uniqueIp() })).body.token as string;
    const ws = await silentSocket(websocketUrl, token);

    // Past the idle period with the connection open: counted as activity at the sweep's minute.
    await runIdleStops({ now: minutes(t0, 3) });
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    expect((await getIdleWatch(user.userId))?.lastActivityAt).toBe(minutes(t0, 3).toISOString());

    ws.close();
    await new Promise((r) => ws.once('close', r));
    // The close (in real time, near t0) is older than the recorded activity: it changes nothing more.
    await runIdleStops({ now: minutes(t0, 4) });
    expect((await getInstance(user.userId, true))?.status).toBe('running');
    await runIdleStops({ now: minutes(t0, 5.5) });
    expect(await getInstance(user.userId, true)).toMatchObject({ status: 'stopped', stopReason: 'idle' });
  });
});
