import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSession } from '../helpers/api';
import { TEST_JWT_SECRET } from '../helpers/worker-setup';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * `npm start` with a fast heartbeat timer: a heartbeat set over real HTTP runs on the next tick.
 * The stack signs sessions with the test secret, so a test session is a valid Bearer token there.
 */
describe('npm start runs the heartbeat on its timer', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-hb-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'WARN', DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET, HEARTBEAT_TICK_MS: '500' };
  for (const k of ['DYNAMODB_ENDPOINT', 'SQS_ENDPOINT', 'TABLE_NAME', 'PROVISIONING_QUEUE_URL', 'EVENTS_QUEUE_URL', 'STAGE', 'APP_URL']) delete env[k];
  let child: ReturnType<typeof spawn>;
  let stdout = '';
  let stderr = '';
  let base = '';

  beforeAll(async () => {
    child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/local.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in 60 s; stderr: ${stderr}`)), 60_000);
      child.stdout!.on('data', () => {
        const m = /^ready: (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
  }, 90_000);

  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
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

  it('stops cleanly with the timer running', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('stopped');
  });
});
