import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack, until } from '../helpers/local-stack';
import { testSession } from '../helpers/api';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

/**
 * `npm start` with a fast heartbeat timer: a heartbeat set over real HTTP runs on the next tick.
 * The stack signs sessions with the test secret, so a test session is a valid Bearer token there.
 */
describe('npm start runs the heartbeat on its timer', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-hb-'));
  let stack: LocalStack;
  let base = '';

  beforeAll(async () => {
    stack = startLocalStack({ DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET, HEARTBEAT_TICK_MS: '500' });
    base = await stack.ready;
  }, 90_000);

  afterAll(() => {
    if (stack?.child.exitCode === null) stack.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a heartbeat switched on is taken on the next tick: lastHeartbeat advances', async () => {
    const user = await testSession();
    const api = (method: string, body?: unknown) =>
      fetch(`${base}/api/heartbeat`, {
        method,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    const set = await api('POST', { frequency: '5m', enabled: true });
    expect(set.status).toBe(200);
    expect(set.body.lastHeartbeat).toBeNull();

    let heartbeat: any;
    for (let i = 0; i < 100; i += 1) {
      heartbeat = (await api('GET')).body.heartbeat;
      if (heartbeat.lastHeartbeat) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(heartbeat.lastHeartbeat).not.toBeNull();
    expect(Date.parse(heartbeat.lastHeartbeat)).toBeGreaterThanOrEqual(Date.parse(set.body.nextHeartbeat));
    expect(Date.parse(heartbeat.nextHeartbeat) - Date.parse(heartbeat.lastHeartbeat)).toBe(5 * 60_000);
  });

  it('a healthy local platform with traffic reports its API uptime and success rate from its answers, not 0', async () => {
    const figures = await until(
      async () => {
        // A refused caller (401) is the API working too.
        await fetch(`${base}/api/heartbeat`);
        const res = await fetch(`${base}/api/metrics`);
        expect(res.status).toBe(200);
        const m = ((await res.json()) as any).metrics;
        return m.uptime.platformUptime > 0 ? m : undefined;
      },
      'the public figures to count the traffic',
      40_000,
    );
    expect(figures.uptime.platformUptime).toBe(100);
    expect(figures.performance.successRate).toBe('100%');
    expect(figures.performance.errorRate).toBe('0%');
    expect(figures.performance.averageResponseTime).toBeGreaterThanOrEqual(0);
  });

  it('stops cleanly with the timer running', async () => {
    stack.child.kill('SIGTERM');
    expect(await stack.exited()).toBe(0);
    expect(stack.output().stderr).toContain('stopped');
  });
});
