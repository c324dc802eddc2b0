import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { localStackWithAdmin, until } from '../helpers/local-stack';

/**
 * Recovery evicts: rotating the gateway token over `npm start` reaches the runtime that
 * is already running. The new token opens the agent's websocket, the old one is refused, and the
 * instance keeps running with its memory.
 */

/** The agent's first websocket frame with `token` in the subprotocol, or the HTTP status of a refused upgrade. */
function openWith(url: string, token: string): Promise<{ frame?: any; refused?: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['agent-runtime', `bearer.${token}`]);
    ws.once('message', (d) => {
      ws.close();
      resolve({ frame: JSON.parse(d.toString()) });
    });
    ws.once('unexpected-response', (_q, res) => resolve({ refused: res.statusCode }));
    ws.once('error', reject);
  });
}

describe('gateway-token rotation reaches a running runtime over the local stack', () => {
  const { api, owner } = localStackWithAdmin('rotation', 'rotation-owner@example.com');

  it('the new token opens the agent, the old one is refused, and the agent keeps its memory and process', async () => {
    const provisioned = await api('POST', '/api/agents/provision', { name: 'rotates its token' });
    expect(provisioned.status, JSON.stringify(provisioned.body)).toBe(201);
    const agentId = provisioned.body.agent.id as string;
    const running = await until(
      async () => {
        const agent = (await api('GET', `/api/agents/${agentId}`)).body.agent;
        return agent?.status === 'running' ? agent : undefined;
      },
      'the agent to run',
      120_000,
    );
    const remembered = await api('POST', '/api/memory', { agentId, key: 'favourite_venue', memory: { city: 'Bristol' } });
    expect(remembered.status, JSON.stringify(remembered.body)).toBeLessThan(300);
    const oldToken = (await api('GET', `/api/instance/${owner.userId}/token`)).body.token as string;
    expect((await openWith(running.websocketUrl, oldToken)).frame).toMatchObject({ type: 'ready', agentId });
    const instanceBefore = (await api('GET', `/api/instance/${owner.userId}`)).body;

    const rotated = await api('POST', `/api/instance/${owner.userId}/token/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const newToken = rotated.body.token as string;
    expect(newToken).not.toBe(oldToken);

    // The runtime picks the new token up while it runs: poll until the new one opens and the old one is refused.
    const opened = await until(
      async () => {
        const res = await openWith(running.websocketUrl, newToken);
        return res.frame ? res : undefined;
      },
      'the runtime to accept the new token',
      30_000,
    );
    expect(opened.frame).toMatchObject({ type: 'ready', agentId });
    // The edge refuses a token that is not the account's (any more): 403.
    expect((await openWith(running.websocketUrl, oldToken)).refused).toBe(403);

    const instanceAfter = (await api('GET', `/api/instance/${owner.userId}`)).body;
    expect(instanceAfter.status).toBe('running');
    // Not relaunched: the same run of the instance took the new token.
    expect(instanceBefore.startedAt).toEqual(expect.any(String));
    expect(instanceAfter.startedAt).toBe(instanceBefore.startedAt);
    const memory = await api('GET', `/api/memory?agentId=${agentId}`);
    expect(JSON.stringify(memory.body)).toContain('Bristol');
  }, 300_000);
});
