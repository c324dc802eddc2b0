import { describe, expect, it } from 'vitest';
import { localStackWithAdmin, until } from '../helpers/local-stack';

/**
 * Installed skills reach a running agent: over `npm start`, a skill installed on a
 * running agent shows up in the runtime's list, and the runtime calls it through the platform
 * with the gateway token.
 */
describe('a skill installed on a running agent, over the local stack', () => {
  const { api, owner } = localStackWithAdmin('skills', 'skills-owner@example.com');

  it('the runtime lists the installed skill and calls it through the platform with the gateway token', async () => {
    const provisioned = await api('POST', '/api/agents/provision', { name: 'plays sets' });
    expect(provisioned.status, JSON.stringify(provisioned.body)).toBe(201);
    const agentId = provisioned.body.agent.id as string;
    const instance = await until(
      async () => {
        const res = await api('GET', `/api/instance/${owner.userId}?waitFor=running`);
        return res.body.status === 'running' ? res.body : undefined;
      },
      'the instance to run',
      120_000,
    );
    expect(instance.status).toBe('running');
    const agent = await until(
      async () => {
        const found = (await api('GET', `/api/agents/${agentId}`)).body.agent;
        return found?.status === 'running' && found.websocketUrl ? found : undefined;
      },
      'the agent to run',
      60_000,
    );
    const runtime = `http://${new URL(agent.websocketUrl as string).host}`;
    const gatewayToken = (await api('GET', `/api/instance/${owner.userId}/token`)).body.token as string;
    expect(gatewayToken).toEqual(expect.any(String));
    const runtimeCall = async (method: string, pathname: string, token: string, body?: unknown) => {
      const res = await fetch(`${runtime}${pathname}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    // Before the install the runtime neither lists the skill nor may call it.
    const before = await runtimeCall('GET', `/agents/${agentId}/skills`, gatewayToken);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body.skills.map((s: { skillId: string }) => s.skillId)).not.toContain('setlist-oracle');
    const refusedBefore = await runtimeCall('POST', `/agents/${agentId}/skills/setlist-oracle`, gatewayToken, { action: 'build', duration: 60 });
    expect(refusedBefore.status, JSON.stringify(refusedBefore.body)).toBe(404);

    const installed = await api('POST', '/api/skills', { skillId: 'setlist-oracle', agentId });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    expect(installed.body).toMatchObject({ success: true, installed: true });

    const listed = await until(
      async () => {
        const res = await runtimeCall('GET', `/agents/${agentId}/skills`, gatewayToken);
        return res.body.skills?.some((s: { skillId: string }) => s.skillId === 'setlist-oracle') ? res.body : undefined;
      },
      'the runtime to list the installed skill',
      30_000,
    );
    expect(listed.skills).toEqual([expect.objectContaining({ skillId: 'setlist-oracle', enabled: true })]);

    // Without the gateway token the edge in front refuses the call.
    expect((await runtimeCall('POST', `/agents/${agentId}/skills/setlist-oracle`, 'not-the-token', { action: 'build', duration: 60 })).status).toBe(403);

    // An empty library builds an empty set, through the runtime and the platform.
    const built = await runtimeCall('POST', `/agents/${agentId}/skills/setlist-oracle`, gatewayToken, { action: 'build', duration: 60 });
    expect(built.status, JSON.stringify(built.body)).toBe(200);
    expect(built.body).toMatchObject({ success: true, setlist: [], count: 0, targetMinutes: 60, libraryTracks: 0 });

    // The platform's own checks still apply to a call from the runtime.
    const invalid = await runtimeCall('POST', `/agents/${agentId}/skills/setlist-oracle`, gatewayToken, { action: 'build' });
    expect(invalid.status, JSON.stringify(invalid.body)).toBe(400);
  }, 300_000);
});
