import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer } from '#local/server';
import { reloadConfig } from '#platform/config';
import { defineGroup } from '#contract/route';
import { createHandler } from '#http/pipeline';
import { logger, resetLogger } from '#platform/logger';

/**
 * The local server handles requests concurrently in one process. Two overlapping requests: the
 * first logs only after the second has finished, so with one shared logger its line would carry
 * the other's requestId (or none, once the other removed its keys).
 */
let releaseSlow!: () => void;
const fastFinished = new Promise<void>((resolve) => {
  releaseSlow = resolve;
});
let markSlowStarted!: () => void;
const slowStarted = new Promise<void>((resolve) => {
  markSlowStarted = resolve;
});

// Two real paths (the router only knows contract routes), served by this file's own operations.
const probe = defineGroup({
  group: 'probe',
  description: 'log context probe',
  dynamoOnly: true,
  routes: [
    { operation: 'slow', method: 'GET', path: '/api/health', auth: 'none', summary: 's', responses: () => ({}) },
    { operation: 'fast', method: 'GET', path: '/api/skills', auth: 'none', summary: 's', responses: () => ({}) },
  ],
});
const handler = createHandler(probe, {
  slow: async () => {
    markSlowStarted();
    await fastFinished;
    logger().info('slow work done');
    return { ok: true };
  },
  fast: async () => {
    logger().info('fast work done');
    setImmediate(releaseSlow);
    return { ok: true };
  },
});

const lines: Record<string, unknown>[] = [];
const originalWrite = process.stdout.write;
let base: string;
let server: ReturnType<typeof createLocalServer>;

beforeAll(async () => {
  reloadConfig({ LOG_LEVEL: 'INFO' });
  resetLogger();
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      try {
        lines.push(JSON.parse(line));
      } catch {
        // not a log line
      }
    }
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stdout.write;
  server = createLocalServer(
    async () => handler,
    () => undefined,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  process.stdout.write = originalWrite;
  reloadConfig({ LOG_LEVEL: 'SILENT' });
  resetLogger();
  await new Promise((resolve) => server.close(resolve));
});

describe('local server log context', () => {
  it('keeps each overlapping request on its own requestId', async () => {
    const slow = fetch(`${base}/api/health`);
    await slowStarted;
    const fast = await fetch(`${base}/api/skills`);
    const slowAnswer = await slow;
    const ids = { slow: slowAnswer.headers.get('x-request-id'), fast: fast.headers.get('x-request-id') };
    expect(ids.slow).toBeTruthy();
    expect(ids.fast).toBeTruthy();
    expect(ids.slow).not.toBe(ids.fast);

    const byMessage = (m: string) => lines.filter((l) => l.message === m);
    expect(byMessage('slow work done').map((l) => l.requestId)).toEqual([ids.slow]);
    expect(byMessage('fast work done').map((l) => l.requestId)).toEqual([ids.fast]);
    const access = byMessage('request').map((l) => [l.route, l.requestId]);
    expect(access).toEqual(
      expect.arrayContaining([
        ['GET /api/health', ids.slow],
        ['GET /api/skills', ids.fast],
      ]),
    );
    expect(access).toHaveLength(2);
  });
});
