import { describe, expect, it } from 'vitest';
import { gatewayToken, getInstance, subdomainFor } from '#data/instances';
import { listLifecycleEvents } from '#data/lifecycle-events';
import { call } from '../helpers/api';
import { startCountingServer } from '../helpers/counting-server';
import { closeCodeOf, converseThroughEdge, edgeRequest, edgeWebsocket } from '../helpers/edge-client';
import { fakeAnswerTo } from '../helpers/fake-model-server';
import { idleStopInstance, pumpProvisioningUntil, runningAgent, startEdge, useAgentsTestBed } from './agents-helpers';

/**
 * The agent edge in front of real runtimes (the local launcher's processes): what reaches an
 * instance, and only at its registered address; an idle-stopped instance woken by a websocket
 * upgrade; the edge's shutdown closing websockets with 1012.
 */

const bed = useAgentsTestBed();

/** Bytes the runtime has received so far, read straight from its registered address (not through the edge). */
async function runtimeBytesIn(userId: string): Promise<number> {
  const instance = await getInstance(userId, true);
  const res = await fetch(`${instance!.handle!.endpoint}/stats`, { headers: { authorization: `Bearer ${await gatewayToken(userId)}` } });
  return ((await res.json()) as { network: { rxBytes: number } }).network.rxBytes;
}

const agentUrl = (userId: string) => `http://${subdomainFor(userId)}.agents.localhost:${bed.edge.port}`;

describe('the agent edge', () => {
  it('refused requests and tricks never reach the runtime, and nothing but the registered address is ever connected to', async () => {
    const { user, agentId } = await runningAgent(bed);
    const other = await runningAgent(bed);
    const otherToken = await gatewayToken(other.user.userId);
    const listener = await startCountingServer((_q, res) => res.end('reached'));
    try {
      // Two reads of the runtime's count with nothing between: the size of one read itself.
      const first = await runtimeBytesIn(user.userId);
      const oneRead = (await runtimeBytesIn(user.userId)) - first;
      const before = await runtimeBytesIn(user.userId);
      const url = agentUrl(user.userId);
      const chat = `${url}/agents/${agentId}/chat`;
      const body = JSON.stringify({ content: 'x'.repeat(10_000) });
      expect((await edgeRequest(chat, { method: 'POST', body })).status).toBe(401);
      expect((await edgeRequest(chat, { method: 'POST', body, headers: { authorization: 'Bearer gw_wrong' } })).status).toBe(403);
      expect((await edgeRequest(chat, { method: 'POST', body, headers: { authorization: `Bearer ${otherToken}` } })).status).toBe(403);
      // Host and forwarding headers, and absolute-form targets, that name the listener.
      const tricks: { headers?: Record<string, string>; target: string }[] = [
        { headers: { 'x-forwarded-host': listener.hostPort }, target: '/health' },
        { headers: { forwarded: `host=${listener.hostPort}` }, target: '/health' },
        { target: listener.url('/health') },
        { target: `//${listener.hostPort}/health` },
      ];
      for (const trick of tricks) {
        const res = await edgeRequest(`${url}/health`, { ...trick, headers: { authorization: 'Bearer gw_wrong', ...trick.headers } });
        expect(res.status, JSON.stringify(trick)).toBeGreaterThanOrEqual(400);
      }
      expect(await runtimeBytesIn(user.userId)).toBe(before + oneRead);

      // With the right token the tricks reach the runtime at its registered address, and only there.
      const token = await gatewayToken(user.userId);
      for (const trick of tricks.slice(0, 2)) {
        const res = await edgeRequest(`${url}/health`, { ...trick, headers: { authorization: `Bearer ${token}`, ...trick.headers } });
        expect(res.body).toMatchObject({ status: 'ok' });
      }
      for (const trick of tricks.slice(2))
        expect((await edgeRequest(`${url}/health`, { ...trick, headers: { authorization: `Bearer ${token}` } })).status).toBe(400);
      // A Host that names the listener is no agent's subdomain.
      const hostTrick = await edgeRequest(`${url}/health`, { headers: { authorization: `Bearer ${token}`, host: listener.hostPort } });
      expect(hostTrick).toMatchObject({ status: 404, body: { code: 'AGENT_NOT_FOUND' } });
      expect(listener.connections()).toBe(0);
    } finally {
      await listener.close();
    }
  }, 90_000);

  it('an idle-stopped instance is woken by a websocket upgrade, which then succeeds', async () => {
    const { user, agentId } = await runningAgent(bed);
    await idleStopInstance(bed, user.userId);
    const token = await gatewayToken(user.userId);
    const ws = edgeWebsocket(`ws://${subdomainFor(user.userId)}.agents.localhost:${bed.edge.port}/agents/${agentId}`, ['agent-runtime', `bearer.${token}`]);
    const answered = converseThroughEdge(ws, 'wake up');
    await pumpProvisioningUntil(bed.queueUrl, async () => (await getInstance(user.userId, true))?.status === 'running');
    expect((await answered).at(-1)).toMatchObject({ role: 'assistant', content: fakeAnswerTo('wake up') });
    ws.close();
    const woken = (await listLifecycleEvents(user.userId, 50)).events.filter((e) => e.type === 'instance.requested' && e.cause === 'wake');
    expect(woken).toEqual([expect.objectContaining({ op: 'start', details: { wokenBy: 'edge' } })]);
  }, 90_000);

  it('a stopped instance answers 409 with how to start it; a request never wakes an instance its owner stopped', async () => {
    const { user } = await runningAgent(bed);
    expect((await call('POST', `/api/instance/${user.userId}/stop`, { session: user })).status).toBe(200);
    await pumpProvisioningUntil(bed.queueUrl, async () => (await bed.launcher.aliveFor(user.userId)).length === 0);
    const launches = bed.launcher.launchesFor(user.userId).length;
    const res = await edgeRequest(`${agentUrl(user.userId)}/health`, { headers: { authorization: `Bearer ${await gatewayToken(user.userId)}` } });
    expect(res).toMatchObject({ status: 409, body: { code: 'INSTANCE_STOPPED', error: expect.stringContaining(`POST /api/instance/${user.userId}/start`) } });
    expect(bed.launcher.launchesFor(user.userId)).toHaveLength(launches);
  }, 60_000);

  it('a websocket the edge carries is closed with 1012 when the edge shuts down', async () => {
    const { user, agentId } = await runningAgent(bed);
    const edge = await startEdge();
    try {
      const token = await gatewayToken(user.userId);
      const ws = edgeWebsocket(`ws://${subdomainFor(user.userId)}.agents.localhost:${edge.port}/agents/${agentId}?token=${token}`);
      await converseThroughEdge(ws, 'before the restart');
      const code = closeCodeOf(ws);
      await edge.close();
      expect(await code).toBe(1012);
    } finally {
      await edge.close().catch(() => undefined);
    }
  }, 60_000);
});
