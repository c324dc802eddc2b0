import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The environment a user's shell would have: none of the test worker's platform settings. */
function cleanEnv() {
  const env = { ...process.env };
  for (const k of ['JWT_SECRET', 'DYNAMODB_ENDPOINT', 'SQS_ENDPOINT', 'TABLE_NAME', 'PROVISIONING_QUEUE_URL', 'EVENTS_QUEUE_URL', 'STAGE', 'APP_URL', 'ADMIN_EMAILS', 'TESTER_EMAILS']) delete env[k];
  return env;
}

function startStack(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/local.ts'], {
    cwd: ROOT,
    env: { ...cleanEnv(), PORT: '0', LOG_LEVEL: 'WARN', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 60 s; stderr: ${stderr}`)), 60_000);
    child.stdout!.on('data', () => {
      const m = /^ready: (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${stderr}`));
    });
  });
  return { child, ready, output: () => ({ stdout, stderr }) };
}

const exited = (child: ChildProcess) => new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c))));

const javaProcessesUsing = (dir: string) => {
  try {
    return execFileSync('pgrep', ['-f', dir]).toString().trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('npm start (the embedded local stack)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-'));
  let stack: ReturnType<typeof startStack>;
  let base: string;

  beforeAll(async () => {
    stack = startStack({ DATA_DIR: dataDir });
    base = await stack.ready;
  }, 90_000);

  afterAll(() => {
    stack?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints exactly one ready line with the loopback URL', () => {
    expect(stack.output().stdout.match(/^ready: /gm)).toHaveLength(1);
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers GET /api/health per the spec over real HTTP', async () => {
    const res = await fetch(`${base}/api/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe('ok');
    expect(['healthy', 'degraded', 'unhealthy']).toContain(body.health);
    expect(body.cpu.cores).toBeGreaterThan(0);
    expect(body.memory.total).toBe(body.memory.used + body.memory.free);
  });

  it('serves the OpenAPI document with every contract path', async () => {
    const { allRoutes } = await import('../../shared/contract');
    const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    for (const r of allRoutes) expect(doc.paths[r.path]?.[r.method.toLowerCase()]?.operationId).toBe(r.operation);
  });

  it('answers unknown paths and methods with JSON errors, and bad JSON with 400', async () => {
    expect((await fetch(`${base}/api/nope`)).status).toBe(404);
    expect((await fetch(`${base}/api/health`, { method: 'DELETE' })).status).toBe(405);
    const res = await fetch(`${base}/api/register`, { method: 'POST', body: '{oops', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).code).toBe('INVALID_JSON');
  });

  it('generated a JWT secret into the data folder, readable only by its owner', () => {
    const secret = readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim();
    expect(Buffer.byteLength(secret)).toBeGreaterThanOrEqual(32);
  });

  it('stops cleanly on SIGTERM, DynamoDB Local included', async () => {
    expect(javaProcessesUsing(dataDir).length).toBeGreaterThan(0);
    stack.child.kill('SIGTERM');
    expect(await exited(stack.child)).toBe(0);
    expect(stack.output().stderr).toContain('stopped');
    await new Promise((r) => setTimeout(r, 300));
    expect(javaProcessesUsing(dataDir)).toEqual([]);
  });
});

describe('npm start refuses bad settings', () => {
  it('a JWT_SECRET under 32 bytes stops it before anything starts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-'));
    const stack = startStack({ DATA_DIR: dataDir, JWT_SECRET: 'too-short' });
    await expect(stack.ready).rejects.toThrow(/JWT_SECRET must be at least 32 bytes/);
    expect(await exited(stack.child)).toBe(1);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
