import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';

const javaProcessesUsing = (dir: string) => {
  try {
    return execFileSync('pgrep', ['-f', dir]).toString().trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('npm start (the embedded local stack)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-'));
  let stack: LocalStack;
  let base: string;

  beforeAll(async () => {
    stack = startLocalStack({ DATA_DIR: dataDir });
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
    const { allRoutes } = await import('#contract');
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
    expect(await stack.exited()).toBe(0);
    expect(stack.output().stderr).toContain('stopped');
    await new Promise((r) => setTimeout(r, 300));
    expect(javaProcessesUsing(dataDir)).toEqual([]);
  });
});

describe('npm start refuses bad settings', () => {
  it('a JWT_SECRET under 32 bytes stops it before anything starts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-platform-e2e-'));
    const stack = startLocalStack({ DATA_DIR: dataDir, JWT_SECRET: 'too-short' });
    await expect(stack.ready).rejects.toThrow(/JWT_SECRET must be at least 32 bytes/);
    expect(await stack.exited()).toBe(1);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
